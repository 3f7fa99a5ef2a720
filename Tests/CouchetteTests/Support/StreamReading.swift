import Foundation

/// Reads a whole input stream (opening and closing it).
func readAll(_ stream: InputStream) -> Data {
    stream.open()
    defer { stream.close() }
    var result = Data()
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = stream.read(&buffer, maxLength: buffer.count)
        if count <= 0 { break }
        result.append(contentsOf: buffer[..<count])
    }
    return result
}
