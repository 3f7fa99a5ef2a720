import CouchetteSQLite
import CouchetteTestSupport
import Foundation
import Testing

@testable import Couchette

// MARK: - CLITests

/// The `couchette` tool run as a subprocess on real database files (plain and encrypted): each command's output,
/// exit code (0 ok, 1 error, 2 usage, 3 not found, 4 wrong key) and its effect on the database.
@Suite("couchette: database commands", .timeLimit(.minutes(5)))
struct CLITests {
    /// A database `todo` in a new folder with three task lists, one deleted document, one conflict and a
    /// collection `todo.tasks`.
    static func makeDatabase(key: EncryptionKey? = nil) throws -> (TemporaryDirectory, String) {
        let directory = TemporaryDirectory()
        var config = DatabaseConfiguration()
        config.directory = directory.path
        config.encryptionKey = key
        let database = try Database(name: "todo", config: config)
        let lists = try database.defaultCollection()
        for (id, name) in [("groceries", "Groceries"), ("today", "Today"), ("work", "Work")] {
            try lists.save(document: MutableDocument(id: id, data: ["type": "task-list", "name": name]))
        }
        try lists.save(document: MutableDocument(id: "gone", data: ["type": "task-list"]))
        try lists.delete(document: try #require(try lists.document(id: "gone")))
        // A conflict: two children of work's first revision.
        let first = try #require(try lists.currentRevision(documentID: "work"))
        try lists.save(document: try #require(try lists.document(id: "work")).toMutable().setString("Work!", forKey: "name"))
        let branch = first.createRevision()
        branch["name"] = "Other work"
        _ = try branch.saveAllowingConflict()
        let tasks = try database.createCollection(name: "tasks", scope: "todo")
        try tasks.save(document: MutableDocument(id: "t1", data: ["task": "Milk", "list": "groceries"]))
        try database.close()
        return (directory, directory.path + "/todo.couchette")
    }

    /// Runs the tool; returns its exit status, standard output and standard error.
    static func run(_ arguments: [String], environment: [String: String] = [:]) throws
        -> (status: Int32, output: String, errors: String)
    {
        let child = try ChildProcess(
            try ChildProcess.builtProduct("couchette"), arguments,
            environment: environment.isEmpty ? nil : ProcessInfo.processInfo.environment.merging(environment) { $1 },
            separateErrors: true)
        let status = try child.waitForExit(within: .seconds(60))
        return (status, child.output, child.errors)
    }

    /// The standard output of a command that must succeed (its errors are recorded when it does not).
    static func output(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let result = try run(arguments)
        if result.status != 0 {
            Issue.record("\(arguments) exited with \(result.status): \(result.errors)", sourceLocation: sourceLocation)
        }
        return result.output
    }

    static func open(_ directory: TemporaryDirectory, key: EncryptionKey? = nil) throws -> Database {
        var config = DatabaseConfiguration()
        config.directory = directory.path
        config.encryptionKey = key
        return try Database(name: "todo", config: config)
    }

    @Test("info and lscoll describe the file and its collections; the database may come first, as in cblite")
    func infoAndCollections() async throws {
        // Off the cooperative threads: the test waits on processes, which must not stall other tests' tasks.
        try await offCooperativeThreads {
            let (directory, path) = try Self.makeDatabase()
            let info = try Self.run(["info", "--json", path])
            #expect(info.status == 0, "\(info.errors)")
            let json = try JSONValue(parsing: Array(info.output.utf8))
            #expect(json["encrypted"] == false)
            #expect(json["collections"]?[0]?["name"] == "_default._default")
            #expect(json["collections"]?[0]?["documents"] == 3)
            #expect(json["collections"]?[0]?["deleted"] == 1)
            #expect(json["collections"]?[0]?["conflicted"] == 1)
            let text = try Self.run([path, "info"])
            #expect(text.status == 0 && text.output.contains("_default._default: 3 documents, 1 deleted, 1 in conflict"))
            let collections = try Self.run([path, "lscoll"])
            #expect(collections.output == "_default._default  3 documents\ntodo.tasks  1 documents\n")
            #expect(try Self.run(["mkcoll", path, "todo.notes"]).status == 2)  // needs -w
            #expect(try Self.run(["mkcoll", "-w", path, "todo.notes"]).output == "Created todo.notes\n")
            #expect(try Self.open(directory).collection(name: "notes", scope: "todo") != nil)
            #expect(try Self.run(["info", directory.path + "/nope.couchette"]).status == 3)
        }
    }

    @Test("ls lists by ID or sequence, with paging, deleted and conflicted documents, bodies and JSON")
    func list() async throws {
        // Off the cooperative threads: the test waits on processes, which must not stall other tests' tasks.
        try await offCooperativeThreads {
            let (directory, path) = try Self.makeDatabase()
            defer { withExtendedLifetime(directory) {} }
            #expect(try Self.output(["ls", path]) == "groceries\ntoday\nwork\n")
            #expect(try Self.run(["ls", "--del", "--desc", path]).output == "work\ntoday\ngroceries\ngone\n")
            #expect(try Self.run(["ls", "--offset", "1", "--limit", "1", path]).output == "today\n")
            #expect(try Self.run(["ls", "--conf", path]).output == "work\n")
            let long = try Self.run(["ls", "-l", "--seq", path]).output.split(separator: "\n")
            #expect(long.first?.hasPrefix("groceries  1-") == true && long.last?.contains("[conflict]") == true)
            let json = try JSONValue(parsing: Array(try Self.run(["ls", "--json", "--body", path]).output.utf8))
            #expect(json[0]?["id"] == "groceries" && json[0]?["body"]?["name"] == "Groceries")
            #expect(try Self.run(["ls", "--collection", "todo.tasks", path]).output == "t1\n")
            #expect(try Self.run(["ls", "--collection", "todo.nope", path]).status == 3)
        }
    }

    @Test("cat prints bodies (raw with metadata and conflicts, by revision, JSON5 style); revs draws the tree with flags")
    func catAndRevs() async throws {
        // Off the cooperative threads: the test waits on processes, which must not stall other tests' tasks.
        try await offCooperativeThreads {
            let (directory, path) = try Self.makeDatabase()
            defer { withExtendedLifetime(directory) {} }
            let cat = try Self.run(["cat", "--json", path, "groceries", "today"])
            #expect(cat.output == "{\"name\":\"Groceries\",\"type\":\"task-list\"}\n{\"name\":\"Today\",\"type\":\"task-list\"}\n")
            let raw = try JSONValue(parsing: Array(try Self.run(["get", "--raw", "--json", path, "work"]).output.utf8))
            #expect(raw["_id"] == "work" && raw["_conflicts"]?.arrayValue?.count == 1)
            let missing = try Self.run(["cat", path, "groceries", "nope"])
            #expect(missing.status == 3 && missing.errors.contains("Not found: nope"))
            let json5 = try Self.output(["cat", "--json5", "--raw", path, "today"])
            #expect(json5.hasPrefix("{\n  _id: \"today\",\n  _rev: \"1-"))
            #expect(json5.hasSuffix("  name: \"Today\",\n  type: \"task-list\"\n}\n"))
            let revs = try Self.run(["revs", path, "work"]).output
            #expect(revs.hasPrefix("1-"))
            #expect(revs.contains("├─ 2-") && revs.contains("└─ 2-"))
            #expect(revs.contains("[current, leaf]") && revs.contains("[leaf, conflict]"))
            let dot = try Self.run(["revs", "--dot", path, "work"]).output
            #expect(dot.hasPrefix("digraph \"work\"") && dot.contains("->"))
            let gone = try Self.run(["revs", path, "gone"]).output
            #expect(gone.contains("[current, leaf, deleted]"))
        }
    }

    @Test("put, rm and purge change the database only with --writeable; --create and --update are checked")
    func writes() async throws {
        // Off the cooperative threads: the test waits on processes, which must not stall other tests' tasks.
        try await offCooperativeThreads {
            let (directory, path) = try Self.makeDatabase()
            let refused = try Self.run(["put", path, "new", "{\"a\":1}"])
            #expect(refused.status == 2 && refused.errors.contains("--writeable"))
            #expect(try Self.run(["put", "-w", "--create", path, "new", "{\"a\":1}"]).output.hasPrefix("Saved new as 1-"))
            #expect(try Self.run(["put", "-w", "--create", path, "new", "{\"a\":2}"]).status == 1)
            #expect(try Self.run(["put", "-w", "--update", path, "absent", "{\"a\":2}"]).status == 3)
            #expect(try Self.run(["put", "-w", path, "new", "[1]"]).status == 2)
            #expect(try Self.run(["put", "-w", "--update", path, "--", "new", "{\"a\":3}"]).status == 0)
            #expect(try Self.run(["put", "-w", path, "--", "-dash", "{\"d\":true}"]).status == 0)
            #expect(try Self.run(["rm", "-w", path, "today"]).output == "Deleted today\n")
            #expect(try Self.run(["purge", "-w", path, "gone"]).output == "Purged gone\n")
            #expect(try Self.run(["rm", "-w", path, "nope"]).status == 3)
            let database = try Self.open(directory)
            let lists = try database.defaultCollection()
            #expect(try lists.document(id: "new")?.int(forKey: "a") == 3)
            #expect(try lists.document(id: "-dash") != nil)
            #expect(try lists.document(id: "today") == nil)
            #expect(try lists.revisionTree(documentID: "gone") == nil)
            try database.close()
        }
    }

    @Test("query runs SQL++ (rows as JSON lines, --json an array, --offset/--limit, --explain); bad SQL is a usage error")
    func query() async throws {
        // Off the cooperative threads: the test waits on processes, which must not stall other tests' tasks.
        try await offCooperativeThreads {
            let (directory, path) = try Self.makeDatabase()
            defer { withExtendedLifetime(directory) {} }
            let rows = try Self.run(["query", path, "SELECT META().id AS id FROM _ WHERE type = 'task-list' ORDER BY META().id"])
            #expect(rows.output == "{\"id\":\"groceries\"}\n{\"id\":\"today\"}\n{\"id\":\"work\"}\n")
            let page = try Self.run([
                "query", "--json", "--offset", "1", "--limit", "1", path, "SELECT META().id AS id FROM _ ORDER BY META().id",
            ])
            #expect(page.output == "[{\"id\":\"today\"}]\n")
            #expect(try Self.run(["query", "--explain", path, "SELECT name FROM _"]).output.contains("SELECT"))
            #expect(try Self.run(["query", path, "SELEKT nonsense"]).status == 2)
        }
    }

    @Test("An encrypted database opens with its password file or key, and a wrong or missing key is exit code 4")
    func encrypted() async throws {
        // Off the cooperative threads: the test waits on processes, which must not stall other tests' tasks.
        try await offCooperativeThreads {
            let (directory, path) = try Self.makeDatabase(key: .password("s3cret"))
            let passwordFile = directory.path + "/password"
            try "s3cret\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
            let wrongFile = directory.path + "/wrong"
            try "guess\n".write(toFile: wrongFile, atomically: true, encoding: .utf8)
            let opened = try Self.run(["info", "--json", "--password-file", passwordFile, path])
            #expect(opened.status == 0, "\(opened.errors)")
            #expect(try JSONValue(parsing: Array(opened.output.utf8))["encrypted"] == true)
            #expect(try Self.run(["ls", "--password-file", passwordFile, path]).output == "groceries\ntoday\nwork\n")
            #expect(try Self.run(["ls", "--password-file", wrongFile, path]).status == 4)
            let noKey = try Self.run(["ls", path])
            #expect(noKey.status == 4 && noKey.errors.contains("encrypted"))
            #expect(try Self.run(["ls", "--key-hex", "zz", path]).status == 2)
        }
    }

    @Test("export writes JSON lines that import reads back into another database; --keep keeps documents")
    func exportAndImport() async throws {
        // Off the cooperative threads: the test waits on processes, which must not stall other tests' tasks.
        try await offCooperativeThreads {
            let (directory, path) = try Self.makeDatabase()
            defer { withExtendedLifetime(directory) {} }
            let file = directory.path + "/lists.jsonl"
            #expect(try Self.run(["export", path, file]).status == 0)
            let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
            #expect(lines.count == 3)
            #expect(lines.contains { $0.contains("\"_id\":\"groceries\"") })
            // Into an empty database.
            let target = TemporaryDirectory()
            var config = DatabaseConfiguration()
            config.directory = target.path
            try Database(name: "copy", config: config).close()
            let copy = target.path + "/copy.couchette"
            #expect(try Self.output(["import", "-w", copy, file]) == "Imported 3 documents\n")
            #expect(try Self.output(["ls", copy]) == "groceries\ntoday\nwork\n")
            #expect(try JSONValue(parsing: Array(try Self.output(["cat", "--json", copy, "today"]).utf8))["name"] == "Today")
            #expect(try Self.output(["import", "-w", "--keep", copy, file]) == "Imported 0 documents, kept 3 existing\n")
            try "not json\n".write(toFile: target.path + "/bad.jsonl", atomically: true, encoding: .utf8)
            #expect(try Self.run(["import", "-w", copy, target.path + "/bad.jsonl"]).status == 2)
        }
    }

    @Test(
        "Regression: an export carries blob content, and the round trip (JSON lines and folder, plain and encrypted) is exact",
        arguments: [(encrypted: false, folder: false), (encrypted: true, folder: false), (encrypted: false, folder: true), (encrypted: true, folder: true)])
    func exportRoundTripKeepsBlobs(_ form: (encrypted: Bool, folder: Bool)) async throws {
        try await offCooperativeThreads {
            let directory = TemporaryDirectory()
            let passwordFile = directory.path + "/password"
            try "s3cret\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
            let keyOptions = form.encrypted ? ["--password-file", passwordFile] : []
            var config = DatabaseConfiguration()
            config.directory = directory.path
            config.encryptionKey = form.encrypted ? .password("s3cret") : nil
            let source = try Database(name: "photos", config: config)
            var digests: [String: String] = [:]
            try source.inBatch {
                for index in 0..<1_000 {
                    let bytes = Data((0..<(200 + index)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index) })
                    let id = String(format: "photo-%04d", index)
                    let document = MutableDocument(id: id).setInt(index, forKey: "n")
                        .setBlob(Blob(contentType: "image/png", data: bytes), forKey: "image")
                    try source.defaultCollection().save(document: document)
                    digests[id] = try #require(source.defaultCollection().document(id: id)?.blob(forKey: "image")?.digest)
                }
            }
            // And an attachment of the 1.x API (`_attachments`).
            let notes = Data("meeting notes".utf8)
            let legacy = try source.defaultCollection().putProperties(["kind": "legacy"], documentID: "legacy").createRevision()
            legacy.setAttachment(named: "notes.txt", contentType: "text/plain", content: notes)
            _ = try legacy.save()
            try source.close()
            let path = directory.path + "/photos.couchette"
            let exported = directory.path + (form.folder ? "/photos-folder/" : "/photos.jsonl")
            let export = try Self.run(["cp"] + keyOptions + [path, exported])
            #expect(export.status == 0, "\(export.errors)")

            // Into a new database (encrypted with the same password when the source was).
            let copyPath = directory.path + "/copy.couchette"
            let imported = try Self.run(["cp"] + keyOptions + [exported, copyPath])
            #expect(imported.status == 0, "\(imported.errors)")
            #expect(imported.output.contains("Imported 1001 documents"))
            let check = try Self.run(["check"] + keyOptions + [copyPath])
            #expect(check.status == 0, "\(check.output)\(check.errors)")
            #expect(!check.output.contains("missing"))
            let copy = try Database(name: "copy", config: config)
            defer { try? copy.close() }
            for (id, digest) in digests {
                let blob = try #require(try copy.defaultCollection().document(id: id)?.blob(forKey: "image"), "\(id)")
                #expect(blob.digest == digest)
                #expect(blob.content.map { Blob(contentType: "image/png", data: $0).digest } == digest)
            }
            let attachment = try copy.defaultCollection().currentRevision(documentID: "legacy")?.attachment(named: "notes.txt")
            #expect(attachment?.content == notes)
        }
    }

    @Test("Regression: importing a blob stub whose content is neither in the file nor in the database fails, naming the document, and writes nothing")
    func importOfAMissingBlobFails() async throws {
        try await offCooperativeThreads {
            let directory = TemporaryDirectory()
            let file = directory.path + "/stubs.jsonl"
            try """
                {"_id":"fine","v":1}
                {"_id":"broken","image":{"@type":"blob","content_type":"image/png","digest":"sha1-AAAAAAAAAAAAAAAAAAAAAAAAAAA=","length":3}}

                """.write(toFile: file, atomically: true, encoding: .utf8)
            let target = directory.path + "/target.couchette"
            let outcome = try Self.run(["cp", file, target])
            #expect(outcome.status != 0)
            #expect(outcome.errors.contains("\"broken\""), "\(outcome.errors)")
            var config = DatabaseConfiguration()
            config.directory = directory.path
            let database = try Database(name: "target", config: config)
            defer { try? database.close() }
            #expect(try database.defaultCollection().count == 0)
        }
    }

    @Test("mkindex, lsindex and rmindex manage indexes that queries use; compact, check and reindex run")
    func indexesAndMaintenance() async throws {
        // Off the cooperative threads: the test waits on processes, which must not stall other tests' tasks.
        try await offCooperativeThreads {
            let (directory, path) = try Self.makeDatabase()
            defer { withExtendedLifetime(directory) {} }
            #expect(try Self.output(["mkindex", "-w", path, "byType", "type"]) == "Created index byType\n")
            #expect(try Self.output(["mkindex", "-w", "--fts", path, "names", "name"]) == "Created index names\n")
            #expect(try Self.output(["lsindex", path]) == "byType\nnames\n")
            #expect(try Self.output(["query", "--explain", path, "SELECT META().id FROM _ WHERE type = 'task-list'"]).contains("byType"))
            #expect(try Self.output(["query", path, "SELECT META().id AS id FROM _ WHERE MATCH(names, 'groceries')"]) == "{\"id\":\"groceries\"}\n")
            #expect(try Self.output(["rmindex", "-w", path, "byType"]) == "Deleted index byType\n")
            #expect(try Self.run(["rmindex", "-w", path, "byType"]).status == 3)
            #expect(try Self.output(["reindex", "-w", path]) == "Reindexed.\n")
            let compacted = try Self.output(["compact", "-w", path])
            #expect(compacted.hasPrefix("Compacted: "))
            // A compaction never grows the files: the vacuum's write-ahead log is folded in and emptied.
            let sizes = compacted.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
            #expect(sizes.count == 2 && sizes[1] <= sizes[0], "\(compacted)")
            #expect(try Self.output(["check", path]) == "ok\n")
            #expect(try Self.run(["compact", path]).status == 2)
        }
    }

    @Test("encrypt, rekey and decrypt change the key; the old key stops working, the new one opens the file")
    func keys() async throws {
        // Off the cooperative threads: the test waits on processes, which must not stall other tests' tasks.
        try await offCooperativeThreads {
            let (directory, path) = try Self.makeDatabase()
            defer { withExtendedLifetime(directory) {} }
            let first = directory.path + "/first"
            let second = directory.path + "/second"
            try "one\n".write(toFile: first, atomically: true, encoding: .utf8)
            try "two\n".write(toFile: second, atomically: true, encoding: .utf8)
            #expect(try Self.output(["encrypt", "-w", "--new-password-file", first, path]) == "Encrypted with the new key.\n")
            #expect(try Self.run(["ls", path]).status == 4)
            #expect(try Self.output(["rekey", "-w", "--password-file", first, "--new-password-file", second, path]).hasPrefix("Encrypted"))
            #expect(try Self.run(["ls", "--password-file", first, path]).status == 4)
            #expect(try Self.output(["ls", "--password-file", second, path]) == "groceries\ntoday\nwork\n")
            #expect(try Self.output(["check", "--password-file", second, path]) == "ok\n")
            #expect(try Self.output(["decrypt", "-w", "--password-file", second, path]) == "Decrypted.\n")
            #expect(try Self.output(["ls", path]) == "groceries\ntoday\nwork\n")
            let database = try Self.open(directory)
            #expect(try database.defaultCollection().count == 3)
            try database.close()
        }
    }

    @Test("push and pull replicate with a gateway (authenticated) and between local files, with progress lines")
    func replication() async throws {
        // Off the cooperative threads: the test waits on processes, which must not stall other tests' tasks.
        try await offCooperativeThreads {
            let (directory, path) = try Self.makeDatabase()
            defer { withExtendedLifetime(directory) {} }
            // A gateway on free ports, database `todo` in memory, user1 reading every channel.
            let publicPort = try freeLoopbackPort()
            let config = """
                {"interface": "127.0.0.1:\(publicPort)", "adminInterface": "127.0.0.1:\(try freeLoopbackPort())",
                 "databases": {"todo": {"server": "walrus:", "users": {"user1": {"password": "pass", "admin_channels": ["*"]}}}}}
                """
            try config.write(toFile: directory.path + "/gateway.json", atomically: true, encoding: .utf8)
            let gateway = try ChildProcess(try ChildProcess.builtProduct("couchette-gateway"), [directory.path + "/gateway.json"])
            defer { gateway.terminate() }
            try gateway.waitForOutput(within: .seconds(60)) { $0.contains("Admin interface listening") }
            let url = "http://127.0.0.1:\(publicPort)/todo"
            let refused = try Self.run(["push", path, url, "--user", "user1:wrong"])
            #expect(refused.status != 0)
            let pushed = try Self.run(["push", path, url, "--user", "user1:pass"])
            #expect(pushed.status == 0, "\(pushed.errors)")
            #expect(pushed.output.hasPrefix("Replicated: "))
            #expect(pushed.errors.contains("progress: "))  // not a terminal: plain progress lines
            // Pulled into an empty database, and copied from it to another local file.
            let target = TemporaryDirectory()
            var configuration = DatabaseConfiguration()
            configuration.directory = target.path
            try Database(name: "copy", config: configuration).close()
            try Database(name: "second", config: configuration).close()
            let copy = target.path + "/copy.couchette"
            let pulled = try Self.run(["pull", "-w", copy, url, "--user", "user1:pass"])
            #expect(pulled.status == 0, "\(pulled.errors)")
            #expect(try Self.output(["ls", copy]) == "groceries\ntoday\nwork\n")
            #expect(try Self.output(["ls", "--conf", copy]) == "work\n")  // the conflict travelled too
            // As cblite: the database a replication writes needs no -w, and is created when missing unless -x.
            #expect(try Self.output(["push", copy, target.path + "/second.couchette"]).hasPrefix("Replicated: "))
            #expect(try Self.output(["ls", target.path + "/second.couchette"]) == "groceries\ntoday\nwork\n")
            #expect(try Self.run(["push", "-x", copy, target.path + "/third.couchette"]).status == 3)
            let fresh = target.path + "/fresh.couchette"
            #expect(try Self.run(["pull", "-x", fresh, url, "--user", "user1:pass"]).status == 3)
            let created = try Self.run(["pull", fresh, url, "--user", "user1:pass"])
            #expect(created.status == 0, "\(created.errors)")
            #expect(try Self.output(["ls", fresh]) == "groceries\ntoday\nwork\n")
            let synced = try Self.run(["sync", "-w", target.path + "/synced.couchette", url, "--user", "user1:pass"])
            #expect(synced.status == 0, "\(synced.errors)")
            #expect(try Self.output(["ls", target.path + "/synced.couchette"]) == "groceries\ntoday\nwork\n")
        }
    }

    @Test("serve shares a database with peers: a pull and a push through it, a read-only one refuses pushes, SIGTERM stops it")
    func serve() async throws {
        // Off the cooperative threads: the test waits on processes, which must not stall other tests' tasks.
        try await offCooperativeThreads {
            let (directory, path) = try Self.makeDatabase()
            defer { withExtendedLifetime(directory) {} }
            #expect(try Self.run(["serve", path, "--port", "0"]).status == 2)  // serving writable needs -w
            let server = try ChildProcess(
                try ChildProcess.builtProduct("couchette"), ["serve", "-w", path, "--port", "0", "--user", "peer:s3cret"],
                separateErrors: true)
            defer { server.kill() }
            let banner: String
            do {
                banner = try server.waitForOutput(within: .seconds(60)) { $0.contains("Ctrl-C") }
            } catch {
                Issue.record("serve failed (\((try? server.waitForExit()).map(String.init) ?? "?"), signalled \(server.wasKilledBySignal)): \(server.errors)")
                throw error
            }
            let url = try #require(banner.split(separator: "\n").first { $0.hasPrefix("Serving ") }?.dropFirst(8)).description
            #expect(url.hasPrefix("http://127.0.0.1:") && url.hasSuffix("/todo"))

            let target = TemporaryDirectory()
            var configuration = DatabaseConfiguration()
            configuration.directory = target.path
            let peerDatabase = try Database(name: "peer", config: configuration)
            _ = try peerDatabase.defaultCollection().putProperties(["from": "peer"], documentID: "pushed")
            try peerDatabase.close()
            let peer = target.path + "/peer.couchette"
            #expect(try Self.run(["pull", "-w", peer, url, "--user", "peer:wrong"]).status != 0)
            let synced = try Self.run(["sync", "-w", peer, url, "--user", "peer:s3cret"])
            #expect(synced.status == 0, "\(synced.errors)")
            #expect(try Self.output(["ls", peer]) == "groceries\npushed\ntoday\nwork\n")
            #expect(try Self.output(["ls", "--conf", peer]) == "work\n")  // the conflict travelled too
            server.terminate()
            #expect(try server.waitForExit() == 0)
            #expect(server.output.hasSuffix("Stopped.\n"))
            #expect(try Self.output(["cat", path, "pushed"]).contains("peer"))

            let readOnly = try ChildProcess(
                try ChildProcess.builtProduct("couchette"), ["serve", path, "--port", "0", "--readonly"], separateErrors: true)
            defer { readOnly.kill() }
            let readOnlyBanner = try readOnly.waitForOutput(within: .seconds(60)) { $0.contains("Ctrl-C") }
            let readOnlyURL = try #require(
                readOnlyBanner.split(separator: "\n").first { $0.hasPrefix("Serving ") }?.dropFirst(8).split(separator: " ").first
            ).description
            _ = try Self.output(["put", "-w", peer, "another", #"{"n": 1}"#])
            let pushed = try Self.run(["push", peer, readOnlyURL])
            #expect(pushed.output.contains("refused"), "\(pushed.output) \(pushed.errors)")
            readOnly.terminate()
            #expect(try Self.run(["ls", path]).output.contains("another") == false)
        }
    }

    @Test("the interactive shell (driven through tmux): completion, history, cd between collections, a clean exit")
    func shell() async throws {
        // Off the cooperative threads: the test waits on processes, which must not stall other tests' tasks.
        try await offCooperativeThreads {
            let (directory, path) = try Self.makeDatabase()
            let tool = try ChildProcess.builtProduct("couchette").path
            let history = directory.path + "/history"
            // The program's exit status is left on the screen.
            let terminal = try TmuxSession(
                "COUCHETTE_HISTORY='\(history)' '\(tool)' -w '\(path)'; echo \"exited with $?\"; exec sleep 600")
            defer { withExtendedLifetime(terminal) {} }
            try terminal.waitForScreen("the prompt") { $0.contains("todo>") }

            // A command name completed by Tab.
            try terminal.send("lsc", "Tab")
            try terminal.waitForScreen("lscoll completed") { $0.contains("todo> lscoll") }
            try terminal.send("Enter")
            try terminal.waitForScreen("the collections") { $0.contains("todo.tasks  1 documents") }

            // cd with a completed collection name; the prompt names it and commands work in it.
            try terminal.send("cd todo.ta", "Tab")
            try terminal.waitForScreen("the collection completed") { $0.contains("cd todo.tasks") }
            try terminal.send("Enter")
            try terminal.waitForScreen("the new prompt") { $0.contains("todo/todo.tasks>") }
            try terminal.send("cat t", "Tab")
            try terminal.waitForScreen("the document ID completed") { $0.contains("cat t1") }
            try terminal.send("Enter")
            try terminal.waitForScreen("the document") { $0.contains("Milk") }

            // History: ↑ brings the last line back.
            try terminal.send("Up")
            try terminal.waitForScreen("the last line recalled") { $0.components(separatedBy: "todo/todo.tasks> cat t1").count == 3 }
            try terminal.send("Enter")
            try terminal.waitForScreen("the document twice") { $0.components(separatedBy: "Milk").count == 3 }

            // Errors do not end the shell; writes work with -w; cd alone goes back to the default collection.
            try terminal.send("nonsense", "Enter")
            try terminal.waitForScreen("the error") { $0.contains("unknown command \"nonsense\"") }
            try terminal.send("cd", "Enter")
            try terminal.send("put added '{\"name\": \"Added\"}'", "Enter")
            try terminal.send("ls", "Enter")
            try terminal.waitForScreen("the new document") { $0.contains("added\ngroceries\ntoday\nwork") }

            try terminal.send("quit", "Enter")
            try terminal.waitForScreen("a clean exit") { $0.contains("exited with 0") }
            let saved = try String(contentsOfFile: history, encoding: .utf8)
            // libedit's history file, spaces escaped.
            #expect(saved.contains("lscoll\n") && saved.contains("cd\\040todo.tasks\n"), "\(saved)")
            #expect(try Self.output(["cat", path, "added"]).contains("Added"))
        }
    }

    /// How many documents the copy test moves: a few thousand in `make test`, 100,000 in `make soak`.
    static var copiedDocuments: Int {
        ProcessInfo.processInfo.environment["COUCHETTE_CLI_DOCS"].flatMap(Int.init) ?? 3_000
    }

    @Test("cp copies between a database, JSON lines, a folder and a gateway, with progress; counts match both ways")
    func copy() async throws {
        // Off the cooperative threads: the test waits on processes, which must not stall other tests' tasks.
        try await offCooperativeThreads {
            let count = Self.copiedDocuments
            let directory = TemporaryDirectory()
            var configuration = DatabaseConfiguration()
            configuration.directory = directory.path
            let source = try Database(name: "many", config: configuration)
            try source.inBatch {
                for index in 0..<count {
                    try source.defaultCollection().save(
                        document: MutableDocument(id: String(format: "doc-%06d", index), data: ["index": index, "text": "document \(index)"]))
                }
            }
            try source.close()
            let path = directory.path + "/many.couchette"
            let lines = directory.path + "/many.jsonl"

            // To JSON lines and back into a new database (created by cp; -x refuses a missing one).
            let exported = try Self.run(["cp", path, lines])
            #expect(exported.status == 0, "\(exported.errors)")
            #expect(exported.errors.contains("progress: \(count)/\(count) documents"))  // not a terminal: plain lines
            #expect(try String(contentsOfFile: lines, encoding: .utf8).split(separator: "\n").count == count)
            #expect(try Self.run(["cp", "-x", "-w", lines, directory.path + "/missing.couchette"]).status == 3)
            let imported = try Self.run(["cp", "-w", lines, directory.path + "/fromlines.couchette"])
            #expect(imported.output == "Imported \(count) documents\n", "\(imported.errors)")
            #expect(try Self.output(["info", "--json", directory.path + "/fromlines.couchette"]).contains("\"documents\":\(count)"))

            // A folder of files, and back.
            let folder = directory.path + "/docs/"
            #expect(try Self.run(["cp", path, folder]).status == 0)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder).count == count)
            let fromFolder = try Self.run(["cp", "-w", folder, directory.path + "/fromfolder.couchette"])
            #expect(fromFolder.output == "Imported \(count) documents\n", "\(fromFolder.errors)")
            #expect(try Self.output(["cat", directory.path + "/fromfolder.couchette", "doc-000002"]).contains("document 2"))

            // To a gateway and back from it into a new database.
            let publicPort = try freeLoopbackPort()
            let config = """
                {"interface": "127.0.0.1:\(publicPort)", "adminInterface": "127.0.0.1:\(try freeLoopbackPort())",
                 "databases": {"many": {"server": "walrus:", "users": {"user1": {"password": "pass", "admin_channels": ["*"]}}}}}
                """
            try config.write(toFile: directory.path + "/gateway.json", atomically: true, encoding: .utf8)
            let gateway = try ChildProcess(try ChildProcess.builtProduct("couchette-gateway"), [directory.path + "/gateway.json"])
            defer { gateway.terminate() }
            try gateway.waitForOutput(within: .seconds(60)) { $0.contains("Admin interface listening") }
            let url = "http://127.0.0.1:\(publicPort)/many"
            let pushed = try Self.run(["cp", path, url, "--user", "user1:pass"])
            #expect(pushed.output == "Replicated: \(count) of \(count) changes\n", "\(pushed.errors)")
            #expect(pushed.errors.contains("progress: "))
            let pulled = try Self.run(["cp", "-w", url, directory.path + "/pulled.couchette", "--user", "user1:pass"])
            #expect(pulled.status == 0, "\(pulled.errors)")
            #expect(try Self.output(["info", "--json", directory.path + "/pulled.couchette"]).contains("\"documents\":\(count)"))
        }
    }

    @Test("edit saves what $EDITOR leaves (and nothing when it changes nothing or leaves bad JSON)")
    func edit() async throws {
        // Off the cooperative threads: the test waits on processes, which must not stall other tests' tasks.
        try await offCooperativeThreads {
            let (directory, path) = try Self.makeDatabase()
            defer { withExtendedLifetime(directory) {} }
            // Editors given as command lines (the shell splits them; the file is the last argument), no script files:
            // a script written while another test forks could be "busy" when executed.
            let editor = "sed -i s/Groceries/Food/"
            #expect(try Self.run(["edit", path, "groceries"], environment: ["EDITOR": editor]).status == 2)  // needs -w
            let saved = try Self.run(["edit", "-w", path, "groceries"], environment: ["EDITOR": editor])
            #expect(saved.status == 0, "\(saved.errors)")
            #expect(saved.output.hasPrefix("Saved groceries 2-"))
            #expect(try Self.output(["cat", path, "groceries"]).contains("Food"))
            #expect(try Self.run(["edit", "-w", path, "groceries"], environment: ["EDITOR": "true"]).output == "No changes.\n")
            let broken = #"sh -c 'echo not-json > "$0"'"#
            #expect(try Self.run(["edit", "-w", path, "groceries"], environment: ["EDITOR": broken]).status == 2)
            #expect(try Self.output(["cat", path, "groceries"]).contains("Food"))
            // A new document starts from {}; $VISUAL comes first.
            let creating = #"sh -c 'echo "{\"name\": \"New\"}" > "$0"'"#
            #expect(try Self.run(["edit", "-w", path, "fresh"], environment: ["VISUAL": creating]).status == 0)
            #expect(try Self.output(["cat", path, "fresh"]).contains("New"))
        }
    }

    @Test("logcat prints the library's log files oldest first, by level and text; compact --prune N shortens histories")
    func logcatAndPrune() async throws {
        // Off the cooperative threads: the test waits on processes, which must not stall other tests' tasks.
        try await offCooperativeThreads {
            let logs = TemporaryDirectory()
            try """
                2026-11-26T10:00:00.000Z Couchette [database] INFO: opened todo
                2026-11-26T10:00:01.000Z Couchette [replicator] WARNING: retrying after 503
                """.write(toFile: logs.path + "/couchette.log.1", atomically: true, encoding: .utf8)
            try """
                2026-11-26T10:00:02.000Z Couchette [replicator] ERROR: stopped: 401
                2026-11-26T10:00:03.000Z Couchette [query] DEBUG: compiled a query
                """.write(toFile: logs.path + "/couchette.log", atomically: true, encoding: .utf8)
            let all = try Self.output(["logcat", logs.path]).split(separator: "\n")
            #expect(all.count == 4 && all.first?.contains("opened todo") == true && all.last?.contains("compiled") == true)
            #expect(try Self.output(["logcat", logs.path, "--level", "warning"]).split(separator: "\n").count == 2)
            #expect(try Self.output(["logcat", logs.path, "--filter", "replicator"]).split(separator: "\n").count == 2)
            #expect(try Self.run(["logcat", logs.path, "--level", "loud"]).status == 2)
            #expect(try Self.run(["logcat", logs.path + "/nope"]).status == 3)

            let (directory, path) = try Self.makeDatabase()
            var database = try Self.open(directory)
            for index in 0..<10 {
                let document = try #require(try database.defaultCollection().document(id: "today")).toMutable()
                try database.defaultCollection().save(document: document.setInt(index, forKey: "edit"))
            }
            try database.close()
            #expect(try Self.output(["compact", "-w", "--prune", "3", path]).hasPrefix("Compacted"))
            database = try Self.open(directory)
            defer { try? database.close() }
            #expect(try database.defaultCollection().currentRevision(documentID: "today")?.history().count == 3)
        }
    }

    @Test("a database in an older format is refused, untouched, unless --upgrade")
    func neverUpgradesWithoutTheFlag() async throws {
        // Off the cooperative threads: the test waits on processes, which must not stall other tests' tasks.
        try await offCooperativeThreads {
            let (directory, path) = try Self.makeDatabase()
            defer { withExtendedLifetime(directory) {} }
            // Mark the file as schema 3 (the version before the current one).
            try Connection(path: path + "/db.sqlite3").setUserVersion(3)
            let refused = try Self.run(["ls", path])
            #expect(refused.status == 1)
            #expect(refused.errors.contains("--upgrade"))
            #expect(try Connection(path: path + "/db.sqlite3").userVersion == 3)
        }
    }

    @Test("on a terminal (tmux) cp draws a progress bar with counts, bytes and rate")
    func progressBarOnATerminal() async throws {
        // Off the cooperative threads: the test waits on processes, which must not stall other tests' tasks.
        try await offCooperativeThreads {
            let (directory, path) = try Self.makeDatabase()
            defer { withExtendedLifetime(directory) {} }
            let tool = try ChildProcess.builtProduct("couchette").path
            let lines = directory.path + "/lists.jsonl"
            let terminal = try TmuxSession("'\(tool)' cp '\(path)' '\(lines)'; echo \"exited with $?\"; exec sleep 600")
            defer { withExtendedLifetime(terminal) {} }
            let screen = try terminal.waitForScreen("the end of the copy") { $0.contains("exited with") }
            #expect(screen.contains("exited with 0"))
            #expect(screen.contains("█") && screen.contains("3/3 documents") && screen.contains("/s"))
            #expect(screen.contains("Exported 3 documents"))
        }
    }

    @Test("An unknown command says so and names the close ones; a database path still opens the shell's way")
    func unknownCommand() async throws {
        try await offCooperativeThreads {
            let typo = try Self.run(["lss"])
            #expect(typo.status == 2)
            #expect(typo.errors.hasPrefix("couchette: unknown command 'lss'. The most similar: ls"), "\(typo.errors)")
            let unrelated = try Self.run(["frobnicate"])
            #expect(unrelated.status == 2)
            #expect(unrelated.errors.contains("unknown command 'frobnicate'. See 'couchette --help'."))
            #expect(!(try Self.run(["stress"]).errors.contains("stress-save")))  // hidden commands are not offered
        }
    }

    @Test("couchette --help lists every command with its purpose, and each command's help describes its options")
    func help() async throws {
        // Off the cooperative threads: the test waits on processes, which must not stall other tests' tasks.
        try await offCooperativeThreads {
            let overview = try Self.output(["--help"])
            let commands = [
                "info", "ls", "lscoll", "mkcoll", "cat", "revs", "put", "edit", "rm", "purge", "query", "mkindex", "rmindex",
                "lsindex", "reindex", "export", "import", "compact", "check", "logcat", "encrypt", "decrypt", "cp", "push",
                "serve", "shell",
            ]
            for command in commands {
                #expect(overview.contains("\n  \(command) ") || overview.contains("\n  \(command), "), "\(command) missing from --help")
                let help = try Self.run(["help", command])
                #expect(help.status == 0 && help.output.contains("USAGE: couchette \(command)"), "\(command): \(help.errors)")
                #expect(!help.output.contains("--writeable") || help.output.contains("Allow changes to the database"))
            }
            #expect(try Self.output(["help", "cp"]).contains("-x, --existing"))
        }
    }
}
