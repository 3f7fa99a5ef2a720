import Couchette
import Foundation
import Testing

/// A client that imports only `Couchette` names its types through the module, as Couchbase Lite users write
/// `CouchbaseLiteSwift.Collection`: `Collection` alone would clash with `Swift.Collection`.
@Suite("A client of the Couchette module", .timeLimit(.minutes(2)))
struct ModuleNameTests {
    @Test("Couchette.Collection, Couchette.Document and the other types resolve through the module name")
    func typesResolveThroughTheModuleName() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("client-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var config = Couchette.DatabaseConfiguration()
        config.directory = folder.path
        let db = try Couchette.Database(name: "client", config: config)
        defer { try? db.close() }

        let lists: Couchette.Collection = try db.defaultCollection()
        try lists.save(document: Couchette.MutableDocument(id: "list").setString("Groceries", forKey: "name"))
        let list: Couchette.Document? = try lists.document(id: "list")
        #expect(list?.string(forKey: "name") == "Groceries")
        #expect(!Couchette.Database.version.isEmpty)

        // Swift's own Collection is still Swift's.
        func count(_ elements: some Swift.Collection) -> Int { elements.count }
        #expect(count([lists.name]) == 1)
    }
}
