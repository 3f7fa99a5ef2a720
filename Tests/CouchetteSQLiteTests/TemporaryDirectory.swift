import Foundation

/// A fresh directory under the system's temporary directory, for test databases.
struct TemporaryDirectory {
    /// The directory.
    let url: URL

    /// The path of a file inside the directory.
    ///
    /// - Parameters:
    ///   - name: The file name.
    /// - Returns: The file's path.
    func path(_ name: String = "test.sqlite") -> String {
        url.appendingPathComponent(name).path
    }
}

/// Runs `body` with a new temporary directory, removed afterwards whatever happens.
///
/// - Parameters:
///   - body: The test; it must close the connections it opens before returning.
/// - Returns: What `body` returns.
/// - Throws: What `body` throws, or a file system error.
func withTemporaryDirectory<T>(_ body: (TemporaryDirectory) throws -> T) throws -> T {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("CouchetteSQLiteTests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    return try body(TemporaryDirectory(url: url))
}
