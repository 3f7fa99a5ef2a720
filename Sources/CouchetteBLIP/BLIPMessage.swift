// MARK: - BLIPMessage

/// A whole BLIP message: a request (`MSG`) or a response (`RPY`, `ERR`), with its number, properties and body
/// (spec: blip-sync-protocol.md §2.1, §2.5, §2.10).
///
/// Each peer numbers the requests it sends from 1; a response carries the number of the request it answers.
///
/// ```swift
/// let request = BLIPMessage.request(number: 1, properties: ["Profile": "getCheckpoint", "client": "cp-abc"])
/// let reply = request.reply(properties: ["rev": "0-1"], body: Array(#"{"remote":2}"#.utf8))
/// let missing = request.errorReply(domain: "HTTP", code: 404, message: "missing")
/// ```
public struct BLIPMessage: Sendable, Hashable {
    /// Request, response or error (never an acknowledgement).
    public var type: BLIPMessageType
    /// The request's number (for a response: the number of the request it answers).
    public var number: UInt64
    /// The properties.
    public var properties: BLIPProperties
    /// The body.
    public var body: [UInt8]
    /// Whether the message should be sent before normal ones.
    public var isUrgent: Bool
    /// Whether the request needs no response.
    public var isNoReply: Bool
    /// Whether the sender should deflate its frames.
    public var isCompressed: Bool

    /// A message.
    public init(
        type: BLIPMessageType, number: UInt64, properties: BLIPProperties = [:], body: [UInt8] = [],
        isUrgent: Bool = false, isNoReply: Bool = false, isCompressed: Bool = false
    ) {
        self.type = type
        self.number = number
        self.properties = properties
        self.body = body
        self.isUrgent = isUrgent
        self.isNoReply = isNoReply
        self.isCompressed = isCompressed
    }

    /// A request.
    public static func request(
        number: UInt64, properties: BLIPProperties, body: [UInt8] = [], isUrgent: Bool = false,
        isNoReply: Bool = false, isCompressed: Bool = false
    ) -> BLIPMessage {
        BLIPMessage(
            type: .request, number: number, properties: properties, body: body, isUrgent: isUrgent,
            isNoReply: isNoReply, isCompressed: isCompressed)
    }

    /// A successful response to this request.
    public func reply(properties: BLIPProperties = [:], body: [UInt8] = [], isCompressed: Bool = false) -> BLIPMessage {
        BLIPMessage(
            type: .response, number: number, properties: properties, body: body, isUrgent: isUrgent,
            isCompressed: isCompressed)
    }

    /// An error response to this request: `Error-Domain` (`BLIP` or `HTTP`), `Error-Code`, the message as body.
    public func errorReply(domain: String, code: Int, message: String = "") -> BLIPMessage {
        BLIPMessage(
            type: .error, number: number, properties: ["Error-Code": String(code), "Error-Domain": domain],
            body: Array(message.utf8), isUrgent: isUrgent)
    }

    /// The error response to a request no handler takes: `BLIP`/404 "No handler for BLIP request", as Sync Gateway
    /// (go-blip) answers — the words Couchbase Lite reports, for instance to a 3.1 app asking `getCollections` of a
    /// server without collections.
    public func unhandledReply() -> BLIPMessage {
        errorReply(domain: "BLIP", code: 404, message: "No handler for BLIP request")
    }

    /// The `Profile` property: which replication message a request is.
    public var profile: String? { properties["Profile"] }

    /// An error response's domain (`BLIP` when the property is absent), code and message.
    public var error: (domain: String, code: Int, message: String)? {
        guard type == .error else { return nil }
        return (
            properties["Error-Domain"] ?? "BLIP", properties["Error-Code"].flatMap { Int($0) } ?? 0,
            String(decoding: body, as: UTF8.self)
        )
    }

    /// The payload before framing: the properties' length, the properties, the body.
    ///
    /// - Throws: ``BLIPError/badProperties(_:)`` for a property holding a NUL; ``BLIPError/propertiesTooLarge(_:)``.
    public func payload() throws(BLIPError) -> [UInt8] {
        let encoded = try properties.encoded()
        guard encoded.count <= BLIPProperties.maximumSize else { throw .propertiesTooLarge(encoded.count) }
        var payload: [UInt8] = []
        payload.reserveCapacity(BLIPVarint.maximumLength + encoded.count + body.count)
        BLIPVarint.write(UInt64(encoded.count), to: &payload)
        payload += encoded
        payload += body
        return payload
    }
}
