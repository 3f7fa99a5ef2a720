import NIOCore

// MARK: - BLIPConnection

/// One BLIP connection over a ``BLIPTransport``: sends requests and waits for their responses, hands incoming
/// requests to a handler and sends its responses, acknowledges long incoming messages and follows the peer's
/// acknowledgements (spec: blip-sync-protocol.md §2).
///
/// ```swift
/// let connection = BLIPConnection(transport: socket) { request, connection in
///     switch request.profile {
///     case "getCheckpoint": return request.reply(properties: ["rev": "0-1"], body: checkpoint)
///     default: return request.unhandledReply()
///     }
/// }
/// // for each binary WebSocket message received:
/// await connection.receive(frame)
/// let reply = try await connection.send(properties: ["Profile": "changes"], body: json, compressed: true)
/// ```
///
/// Frames are written in the order the ``BLIPOutbox`` gives them, by one sending loop at a time. A request without
/// `Profile` gets `ERR BLIP/400`; unreadable properties `ERR BLIP/400`; a fatal framing error closes the connection
/// with code 1002 and fails every request waiting for a response.
public actor BLIPConnection {
    /// Answers an incoming request on a connection (through which it may send requests of its own): its response,
    /// or nil when it needs none (a `NoReply` request's is dropped).
    public typealias RequestHandler = @Sendable (BLIPMessage, BLIPConnection) async -> BLIPMessage?

    private let transport: any BLIPTransport
    private let handler: RequestHandler
    private let observer: RequestObserver?
    /// Where request handlers run (nil: Swift's cooperative threads).
    private let executor: (any TaskExecutor)?
    /// The number of the next request the observer sees, and the complete requests waiting for earlier ones.
    private var nextObserved: UInt64 = 1
    private var heldForObserver: [UInt64: BLIPMessage?] = [:]
    private let reader = BLIPFrameReader()
    private let outbox = BLIPOutbox()
    private var nextRequestNumber: UInt64 = 1
    private var waiting: [UInt64: CheckedContinuation<BLIPMessage, any Error>] = [:]
    /// Callers of ``responses(to:)``: how many of their responses are still to come, keyed by the number of one of
    /// them; and which caller each awaited request's response counts for.
    private var groups: [UInt64: (remaining: Int, continuation: CheckedContinuation<Void, any Error>)] = [:]
    private var groupOf: [UInt64: UInt64] = [:]
    /// Responses that arrived before anyone waited for them (``queue(properties:body:urgent:compressed:)``).
    private var arrived: [UInt64: BLIPMessage] = [:]
    /// Requests queued whose response nobody collected yet.
    private var expected: Set<UInt64> = []
    /// Senders waiting for the outbox to shrink below ``maximumQueuedMessages``.
    private var roomWaiters: [CheckedContinuation<Void, Never>] = []
    private var isSending = false
    private var closedError: BLIPError?
    private var handlers: [UInt64: Task<Void, Never>] = [:]

    /// Sees each incoming request once it and every request the peer numbered before it are complete: in the order
    /// the peer sent them, before its handler runs.
    public typealias RequestObserver = @Sendable (BLIPMessage) -> Void

    /// A connection whose incoming requests `handler` answers.
    ///
    /// Handlers run concurrently as requests complete, and frames of several messages interleave, so a short request
    /// can complete before a long one sent earlier; `observer` sees them in the order they were sent (a replicator
    /// queues a pull's `changes` messages there, so `changes []` never passes the last batch).
    /// Handlers run on `executor` when given (the threads of a store whose calls block), else on Swift's cooperative
    /// threads.
    public init(
        transport: any BLIPTransport, observer: RequestObserver? = nil, executor: (any TaskExecutor)? = nil,
        handler: @escaping RequestHandler
    ) {
        self.transport = transport
        self.observer = observer
        self.executor = executor
        self.handler = handler
    }

    /// Whether the connection was closed (by either side or a fatal error).
    public var isClosed: Bool { closedError != nil }

    // MARK: - Sending requests

    /// How many messages may wait in the outbox before ``post(properties:body:urgent:compressed:)`` waits: a feed
    /// posting revisions faster than the socket takes them is held back instead of queueing without bound.
    public static let maximumQueuedMessages = 64

    /// Sends a request and waits for its response (`RPY` or `ERR`, both returned).
    ///
    /// - Throws: ``BLIPError`` when the connection closes first or the properties cannot be encoded.
    public func send(
        properties: BLIPProperties, body: [UInt8] = [], urgent: Bool = false, compressed: Bool = false
    ) async throws -> BLIPMessage {
        let number = try queue(properties: properties, body: body, urgent: urgent, compressed: compressed)
        return try await response(to: number)
    }

    /// Queues a request and returns its number; ``response(to:)`` waits for its response. Requests go out in the
    /// order they are queued, so a caller can queue several before waiting (a feed's `changes` messages).
    ///
    /// - Throws: ``BLIPError`` when the connection is closed or the properties cannot be encoded.
    public func queue(
        properties: BLIPProperties, body: [UInt8] = [], urgent: Bool = false, compressed: Bool = false
    ) throws(BLIPError) -> UInt64 {
        let number = try enqueueRequest(properties, body, urgent: urgent, noReply: false, compressed: compressed)
        expected.insert(number)
        return number
    }

    /// Waits for the response to the request ``queue(properties:body:urgent:compressed:)`` numbered `number`.
    ///
    /// - Throws: ``BLIPError`` when the connection closes first.
    public func response(to number: UInt64) async throws -> BLIPMessage {
        if let response = arrived.removeValue(forKey: number) {
            expected.remove(number)
            return response
        }
        if let closedError { throw closedError }
        return try await withCheckedThrowingContinuation { continuation in
            waiting[number] = continuation
        }
    }

    /// Queues several requests at once (one call on the connection instead of one per request) and returns their
    /// numbers, in order; ``responses(to:)`` waits for their responses.
    ///
    /// - Throws: ``BLIPError`` when the connection is closed or some properties cannot be encoded (requests queued
    ///   before that one stay queued).
    public func queue(
        _ requests: [(properties: BLIPProperties, body: [UInt8])], urgent: Bool = false, compressed: Bool = false
    ) throws(BLIPError) -> [UInt64] {
        var numbers: [UInt64] = []
        numbers.reserveCapacity(requests.count)
        for request in requests {
            let number = try enqueueRequest(
                request.properties, request.body, urgent: urgent, noReply: false, compressed: compressed)
            expected.insert(number)
            numbers.append(number)
        }
        return numbers
    }

    /// Waits for the responses to the requests numbered `numbers` (queued with ``queue(_:urgent:compressed:)`` or
    /// ``queue(properties:body:urgent:compressed:)``) and returns them in that order: the caller wakes once, when
    /// the last arrives, rather than once per response.
    ///
    /// - Throws: ``BLIPError`` when the connection closes first.
    public func responses(to numbers: [UInt64]) async throws -> [BLIPMessage] {
        let missing = Set(numbers.filter { arrived[$0] == nil })
        if let key = missing.first {
            if let closedError { throw closedError }
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                groups[key] = (missing.count, continuation)
                for number in missing { groupOf[number] = key }
            }
        }
        var collected: [UInt64: BLIPMessage] = [:]
        for number in numbers where collected[number] == nil {
            expected.remove(number)
            collected[number] = arrived.removeValue(forKey: number)
        }
        return try numbers.map { number throws(BLIPError) in
            guard let response = collected[number] else {
                throw closedError ?? .protocolViolation("no response to request #\(number)")
            }
            return response
        }
    }

    /// Sends a request that gets no response (`NoReply`), first waiting while the outbox is full.
    ///
    /// - Throws: ``BLIPError`` when the connection is closed or the properties cannot be encoded.
    public func post(
        properties: BLIPProperties, body: [UInt8] = [], urgent: Bool = false, compressed: Bool = false
    ) async throws(BLIPError) {
        while closedError == nil, outbox.queuedCount >= Self.maximumQueuedMessages {
            await withCheckedContinuation { roomWaiters.append($0) }
        }
        try enqueueRequest(properties, body, urgent: urgent, noReply: true, compressed: compressed)
    }

    /// Numbers a request, queues it and starts sending; returns its number.
    @discardableResult
    private func enqueueRequest(
        _ properties: BLIPProperties, _ body: [UInt8], urgent: Bool, noReply: Bool, compressed: Bool
    ) throws(BLIPError) -> UInt64 {
        if let closedError { throw closedError }
        let number = nextRequestNumber
        nextRequestNumber += 1
        try outbox.enqueue(
            .request(
                number: number, properties: properties, body: body, isUrgent: urgent, isNoReply: noReply,
                isCompressed: compressed))
        startSending()
        return number
    }

    // MARK: - Receiving

    /// Reads one frame from the transport (one binary WebSocket message), in arrival order.
    public func receive(_ frame: ByteBuffer) async {
        guard closedError == nil else { return }
        let events: [BLIPFrameReader.Event]
        do {
            events = try reader.read(frame)
        } catch {
            await fail(error, code: 1002)
            return
        }
        for event in events {
            switch event {
            case .message(let message):
                if message.type == .request { dispatch(message) } else { deliver(message) }
            case .acknowledgement(let frame):
                await sendNow(frame)
            case .acknowledged(let ofResponse, let number, let bytes):
                outbox.acknowledged(ofResponse: ofResponse, number: number, bytes: bytes)
                startSending()
            case .badMessage(let type, let number, let error):
                // An unreadable request gets `ERR BLIP/400`; an unreadable response reaches its requester as one.
                let refusal = BLIPMessage(type: .request, number: number)
                    .errorReply(domain: "BLIP", code: 400, message: error.description)
                if type == .request {
                    observe(number, nil)
                    respond(to: BLIPMessage(type: .request, number: number), with: refusal)
                } else {
                    deliver(refusal)
                }
            }
        }
    }

    /// The transport ended (the peer closed, or the socket failed): fails every request waiting for a response.
    public func transportClosed() {
        finish(.protocolViolation("the connection closed"))
    }

    /// Closes the connection normally (WebSocket code 1000).
    public func close() async {
        guard closedError == nil else { return }
        finish(.protocolViolation("the connection closed"))
        await transport.close(code: 1000, reason: "")
    }

    // MARK: - Helpers

    /// Hands a response to whoever waits for it, or keeps it until ``response(to:)`` asks; drops unexpected ones.
    private func deliver(_ response: BLIPMessage) {
        if let continuation = waiting.removeValue(forKey: response.number) {
            expected.remove(response.number)
            continuation.resume(returning: response)
        } else if expected.contains(response.number) {
            arrived[response.number] = response
            if let key = groupOf.removeValue(forKey: response.number), var group = groups[key] {
                group.remaining -= 1
                if group.remaining == 0 {
                    groups[key] = nil
                    group.continuation.resume()
                } else {
                    groups[key] = group
                }
            }
        }
    }

    private func dispatch(_ request: BLIPMessage) {
        guard request.profile != nil else {
            observe(request.number, nil)
            respond(to: request, with: request.errorReply(domain: "BLIP", code: 400, message: "no Profile"))
            return
        }
        observe(request.number, request)
        let handler = self.handler
        let number = request.number
        let executor = self.executor
        // Made on the actor, so handlers start in the order their requests completed; each runs on `executor`.
        handlers[number] = Task {
            let response = await withTaskExecutorPreference(executor) { await handler(request, self) }
            self.handlerFinished(number, request: request, response: response)
        }
    }

    /// Hands complete requests to the observer in the peer's numbering order (an unreadable one, nil, only takes its
    /// turn).
    private func observe(_ number: UInt64, _ request: BLIPMessage?) {
        guard let observer else { return }
        heldForObserver[number] = .some(request)
        while let next = heldForObserver.removeValue(forKey: nextObserved) {
            nextObserved += 1
            if let next { observer(next) }
        }
    }

    private func handlerFinished(_ number: UInt64, request: BLIPMessage, response: BLIPMessage?) {
        handlers[number] = nil
        if let response { respond(to: request, with: response) }
    }

    /// Sends the response to `request` now, from a handler that goes on working after answering (it then returns
    /// nil): a `subChanges` subscription answers at once, then feeds changes for as long as the connection lasts.
    /// A `NoReply` request's response is dropped.
    public func respond(to request: BLIPMessage, with response: BLIPMessage) {
        guard !request.isNoReply, closedError == nil else { return }
        var response = response
        response.number = request.number
        if response.type == .request { response.type = .response }
        do {
            try outbox.enqueue(response)
        } catch {
            try? outbox.enqueue(request.errorReply(domain: "BLIP", code: 501, message: error.description))
        }
        startSending()
    }

    /// Starts the sending loop unless it runs already (it then picks up what was just queued).
    private func startSending() {
        guard !isSending, closedError == nil else { return }
        isSending = true
        Task { await self.sendQueuedFrames() }
    }

    /// The most frames, and about the most bytes, one write hands the transport: what the outbox has ready, up to
    /// these (frames are 4–16 KiB).
    static let framesPerWrite = 32
    static let bytesPerWrite = 128 << 10

    private func sendQueuedFrames() async {
        defer { isSending = false }
        while closedError == nil {
            var frames: [ByteBuffer] = []
            var bytes = 0
            do {
                while frames.count < Self.framesPerWrite, bytes < Self.bytesPerWrite, let frame = try outbox.nextFrame() {
                    frames.append(frame)
                    bytes += frame.readableBytes
                }
            } catch {
                await fail(error, code: 1011)
                return
            }
            guard !frames.isEmpty else { return }
            if !roomWaiters.isEmpty, outbox.queuedCount < Self.maximumQueuedMessages {
                for waiter in roomWaiters { waiter.resume() }
                roomWaiters = []
            }
            do {
                try await transport.send(contentsOf: frames)
            } catch {
                finish(.protocolViolation("sending failed: \(error)"))
                return
            }
        }
    }

    /// Sends a frame ahead of the queue (acknowledgements).
    private func sendNow(_ frame: ByteBuffer) async {
        do {
            try await transport.send(frame)
        } catch {
            finish(.protocolViolation("sending failed: \(error)"))
        }
    }

    private func fail(_ error: BLIPError, code: Int) async {
        guard closedError == nil else { return }
        finish(error)
        await transport.close(code: code, reason: error.description)
    }

    private func finish(_ error: BLIPError) {
        guard closedError == nil else { return }
        closedError = error
        for continuation in waiting.values { continuation.resume(throwing: error) }
        waiting = [:]
        for group in groups.values { group.continuation.resume(throwing: error) }
        groups = [:]
        groupOf = [:]
        arrived = [:]
        expected = []
        for waiter in roomWaiters { waiter.resume() }
        roomWaiters = []
        for task in handlers.values { task.cancel() }
        handlers = [:]
    }
}
