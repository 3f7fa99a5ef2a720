import Foundation

/// An input stream over a stored body, read piece by piece through a ``BlobReader`` (so an encrypted body is
/// decrypted and checked chunk by chunk, never held whole). A piece that fails its check ends the stream in the
/// `.error` state: `read` returns -1 and ``streamError`` says why.
final class BlobContentStream: InputStream {
    private let makeReader: () throws(CouchetteError) -> BlobReader
    private var reader: BlobReader?
    private var buffered = Data()
    private var offset = 0
    private var status: Stream.Status = .notOpen
    private var failure: (any Error)?

    /// A stream that opens its reader with `makeReader` when it is opened.
    init(makeReader: @escaping () throws(CouchetteError) -> BlobReader) {
        self.makeReader = makeReader
        super.init(data: Data())
    }

    override func open() {
        guard status == .notOpen else { return }
        do {
            reader = try makeReader()
            status = .open
        } catch {
            fail(error)
        }
    }

    override func close() {
        reader = nil
        buffered = Data()
        offset = 0
        if status != .error { status = .closed }
    }

    override var streamStatus: Stream.Status { status }

    override var streamError: (any Error)? { failure }

    override var hasBytesAvailable: Bool { status == .open }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        guard status == .open, let reader else { return status == .atEnd ? 0 : -1 }
        if offset == buffered.count {
            do {
                guard let piece = try reader.next() else {
                    status = .atEnd
                    return 0
                }
                buffered = piece
                offset = 0
            } catch {
                fail(error)
                return -1
            }
        }
        let count = min(length, buffered.count - offset)
        buffered.withUnsafeBytes { bytes in
            UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress! + offset, byteCount: count)
        }
        offset += count
        return count
    }

    override func getBuffer(
        _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length len: UnsafeMutablePointer<Int>
    ) -> Bool {
        false
    }

    private func fail(_ error: CouchetteError) {
        failure = error
        reader = nil
        buffered = Data()
        offset = 0
        status = .error
    }
}
