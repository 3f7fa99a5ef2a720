import AsyncHTTPClient
import Couchette
import CouchetteTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// Peer-to-peer replication through a ``URLEndpointListener``: two Lite databases, both ways, continuous, with
/// conflicts and blobs, over TLS with the listener's anonymous identity; credentials and read-only listeners. Each
/// runs over the CouchDB REST protocol and over BLIP (`ws(s)://`), with the same assertions.
@Suite(.timeLimit(.minutes(5))) struct URLEndpointListenerReplicationTests {
    /// Every document's leaf revisions, sorted.
    private func leaves(_ db: Database) throws -> [String: [String]] {
        let collection = try db.defaultCollection()
        var result: [String: [String]] = [:]
        for change in try collection.changes(since: 0) {
            result[change.documentID] = try collection.leafRevisions(documentID: change.documentID)
                .compactMap(\.revisionID).sorted()
        }
        return result
    }

    private func listener(
        serving db: Database, tls: Bool = true, configure: (inout URLEndpointListenerConfiguration) -> Void = { _ in }
    ) async throws -> URLEndpointListener {
        var config = URLEndpointListenerConfiguration(collections: [try db.defaultCollection()])
        config.networkInterface = "127.0.0.1"
        config.disableTLS = !tls
        configure(&config)
        let listener = URLEndpointListener(config: config)
        try await listener.start()
        return listener
    }

    @Test(arguments: ReplicationProtocol.allCases)
    func twoDatabasesReplicateThroughAListenerBothWaysContinuouslyWithConflictsAndBlobs(_ wire: ReplicationProtocol) async throws {
        try await withDatabases("phone", "tablet") { phone, tablet in
            let phoneDocs = try phone.defaultCollection()
            let tabletDocs = try tablet.defaultCollection()
            // The same document written on both sides before they meet: a conflict both must end up holding.
            _ = try phoneDocs.putProperties(["from": "phone"], documentID: "shared")
            _ = try tabletDocs.putProperties(["from": "tablet"], documentID: "shared")
            for index in 0..<20 {
                _ = try phoneDocs.putProperties(["n": index], documentID: "phone-\(index)")
                _ = try tabletDocs.putProperties(["n": index], documentID: "tablet-\(index)")
            }
            // A blob large enough to travel as multipart/related.
            let photo = Data((0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            try phoneDocs.save(document: MutableDocument(id: "photo").setValue(Blob(contentType: "image/jpeg", data: photo), forKey: "image"))
            // And one the other way (the listener serves its content).
            let drawing = Data((0..<30_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
            try tabletDocs.save(
                document: MutableDocument(id: "drawing").setValue(Blob(contentType: "image/png", data: drawing), forKey: "image"))

            let listener = try await listener(serving: tablet)
            let served = try #require(listener.urls.first)
            #expect(served.scheme == "https")
            #expect(served.path == "/tablet")
            let url = wire.url(served)
            var config = ReplicatorConfiguration(target: URLEndpoint(url: url))
            config.addCollection(phoneDocs)
            config.continuous = true
            config.acceptOnlySelfSignedServerCertificate = true
            let replicator = Replicator(config: config)
            let statuses = replicator.changes()
            replicator.start()
            _ = try await first(of: statuses, within: .seconds(60), "the replicator going idle") { $0.status.activity == .idle }

            #expect(try leaves(phone) == leaves(tablet))
            #expect(try leaves(tablet).count == 43)
            #expect(try leaves(phone)["shared"]?.count == 2)
            #expect(try tabletDocs.document(id: "photo")?.blob(forKey: "image")?.content == photo)
            #expect(try phoneDocs.document(id: "drawing")?.blob(forKey: "image")?.content == drawing)

            // Later changes go both ways while the replicator stays up.
            let atTablet = tabletDocs.documentChanges(id: "late-phone")
            let atPhone = phoneDocs.documentChanges(id: "late-tablet")
            _ = try phoneDocs.putProperties(["written": "on the phone"], documentID: "late-phone")
            _ = try tabletDocs.putProperties(["written": "on the tablet"], documentID: "late-tablet")
            #expect(await next(atTablet, timeout: .seconds(60))?.documentID == "late-phone")
            #expect(await next(atPhone, timeout: .seconds(60))?.documentID == "late-tablet")
            #expect(try phoneDocs.document(id: "late-tablet")?.string(forKey: "written") == "on the tablet")

            replicator.stop()
            _ = try await first(of: statuses, within: .seconds(60), "the replicator stopping") { $0.status.activity == .stopped }
            #expect(replicator.status.error == nil)
            await listener.stop()
            #expect(listener.port == nil)
        }
    }

    @Test(arguments: ReplicationProtocol.allCases)
    func aListenerPresentsAPEMIdentityThatAPinnedReplicatorTrustsAndAnUnpinnedOneRefuses(_ wire: ReplicationProtocol) async throws {
        let files = TemporaryDirectory()
        let folder = files.path
        _ = try await ChildProcess.run([
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", folder + "/key.pem", "-out", folder + "/cert.pem", "-days", "1", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=IP:127.0.0.1",
        ])
        let identity = try TLSIdentity(certificatePEMFile: files.path + "/cert.pem", privateKeyPEMFile: files.path + "/key.pem")
        #expect(identity.certificates.count == 1 && identity.expiration > Date())
        #expect(throws: CouchetteError.self) {
            try TLSIdentity(certificatePEMFile: files.path + "/nope.pem", privateKeyPEMFile: files.path + "/key.pem")
        }
        try await withDatabases("phone", "tablet") { phone, tablet in
            _ = try phone.defaultCollection().putProperties(["n": 1], documentID: "one")
            let listener = try await listener(serving: tablet) { $0.tlsIdentity = identity }
            #expect(listener.tlsIdentity?.certificates == identity.certificates)
            let url = wire.url(try #require(listener.urls.first))
            for pinned in [false, true] {
                var config = ReplicatorConfiguration(target: URLEndpoint(url: url))
                config.addCollection(try phone.defaultCollection())
                config.replicatorType = .push
                if pinned { config.pinnedServerCertificate = identity.certificates[0] }
                let replicator = Replicator(config: config)
                if pinned {
                    try await replicator.run()
                } else {
                    await #expect(throws: CouchetteError.self) { try await replicator.run() }
                    #expect(replicator.status.error?.code == .tlsCertificateUntrusted)
                }
            }
            #expect(try tablet.defaultCollection().document(id: "one") != nil)
            await listener.stop()
        }
    }

    @Test(arguments: ReplicationProtocol.allCases)
    func aListenerWithAPasswordAuthenticatorRefusesOtherCredentials(_ wire: ReplicationProtocol) async throws {
        try await withDatabases("phone", "tablet") { phone, tablet in
            _ = try phone.defaultCollection().putProperties(["n": 1], documentID: "one")
            let listener = try await listener(serving: tablet, tls: false) {
                $0.authenticator = ListenerPasswordAuthenticator(user: "sync", password: "s3cret")
            }
            let url = wire.url(try #require(listener.urls.first))
            for (authenticator, accepted) in [
                (nil, false), (BasicAuthenticator(username: "sync", password: "wrong"), false),
                (BasicAuthenticator(username: "sync", password: "s3cret"), true),
            ] as [(BasicAuthenticator?, Bool)] {
                var config = ReplicatorConfiguration(target: URLEndpoint(url: url))
                config.addCollection(try phone.defaultCollection())
                config.replicatorType = .push
                config.authenticator = authenticator
                let replicator = Replicator(config: config)
                if accepted {
                    try await replicator.run()
                } else {
                    await #expect(throws: CouchetteError.self) { try await replicator.run() }
                    #expect(replicator.status.error?.status == 401)
                }
            }
            #expect(try tablet.defaultCollection().document(id: "one")?.int(forKey: "n") == 1)
            await listener.stop()
        }
    }

    @Test("A connection that sends nothing, half a head, or nothing after its request is closed after idleTimeout")
    func idleConnectionsClose() async throws {
        try await withDatabases("phone", "tablet") { _, tablet in
            let listener = try await listener(serving: tablet, tls: false) { $0.idleTimeout = .milliseconds(300) }
            let port = Int(try #require(listener.port))
            let silent = try RawConnection(port: port)
            let halfHead = try RawConnection(port: port)
            try halfHead.send("GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            let keptAlive = try RawConnection(port: port)
            try keptAlive.send("GET /tablet/ HTTP/1.1\r\nHost: x\r\n\r\n")
            for (name, connection) in [("silent", silent), ("half a head", halfHead), ("kept alive", keptAlive)] {
                let reply = await connection.readUntilClosed(within: .seconds(30))
                #expect(reply.closed, "\(name): still open after the idle timeout")
                if name == "kept alive" { #expect(reply.status == 200) }
            }
            await listener.stop()
        }
    }

    @Test("A malformed request gets 400, 414 or 431 and a closed connection; the listener goes on serving")
    func malformedRequestsAreAnswered() async throws {
        try await withDatabases("phone", "tablet") { _, tablet in
            let listener = try await listener(serving: tablet, tls: false)
            let port = Int(try #require(listener.port))
            let longURL = "GET /tablet/\(String(repeating: "a", count: 80_000)) HTTP/1.1\r\nHost: x\r\n\r\n"
            let manyHeaders = "GET / HTTP/1.1\r\nHost: x\r\n" + (0..<1000).map { "X-H\($0): v\r\n" }.joined() + "\r\n"
            let negativeLength = "PUT /tablet/d HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n"
            let requests: [(name: String, bytes: [UInt8], status: Int)] = [
                ("an 80 KB URL", Array(longURL.utf8), 414), ("1,000 header lines", Array(manyHeaders.utf8), 431),
                ("Content-Length: -5", Array(negativeLength.utf8), 400),
                ("bytes that are not HTTP", [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0xFC, 0x0D, 0x0A, 0x0D, 0x0A], 400),
            ]
            for request in requests {
                let connection = try RawConnection(port: port)
                try connection.send(request.bytes)
                let reply = await connection.readUntilClosed(within: .seconds(30))
                #expect(reply.status == request.status, "\(request.name): \(reply.text.prefix(200))")
                #expect(reply.closed, "\(request.name): the connection stayed open")
            }
            let healthy = try RawConnection(port: port)
            try healthy.send("GET /tablet/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(await healthy.readUntilClosed(within: .seconds(30)).status == 200)
            await listener.stop()
        }
    }

    @Test func aBLIPUpgradeWithoutAcceptedCredentialsGetsTheBasicChallengeBeforeUpgrading() async throws {
        try await withDatabases("phone", "tablet") { _, tablet in
            let listener = try await listener(serving: tablet, tls: false) {
                $0.authenticator = ListenerPasswordAuthenticator(user: "sync", password: "s3cret")
            }
            let port = try #require(listener.port)
            let good = "Basic " + Data("sync:s3cret".utf8).base64EncodedString()
            let wrong = "Basic " + Data("sync:wrong".utf8).base64EncodedString()
            // Couchbase Lite sends no credentials first and answers the challenge with them.
            for (path, authorization, status) in [
                ("/tablet/_blipsync", nil, 401), ("/tablet/_blipsync", wrong, 401), ("/nowhere/_blipsync", good, 404),
            ] as [(String, String?, Int)] {
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
                for (name, value) in [
                    ("Connection", "Upgrade"), ("Upgrade", "websocket"), ("Sec-WebSocket-Version", "13"),
                    ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Sec-WebSocket-Protocol", "BLIP_3+CBMobile_3"),
                ] {
                    request.headers.add(name: name, value: value)
                }
                if let authorization { request.headers.add(name: "Authorization", value: authorization) }
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
                _ = try await response.body.collect(upTo: 1 << 20)
                #expect(Int(response.status.code) == status, "\(path) with \(authorization ?? "no credentials")")
                if status == 401 {
                    #expect(response.headers.first(name: "WWW-Authenticate") == #"Basic realm="Couchette""#)
                }
            }
            await listener.stop()
        }
    }

    @Test(arguments: ReplicationProtocol.allCases)
    func aReadOnlyListenerServesPullsAndRefusesPushedDocuments(_ wire: ReplicationProtocol) async throws {
        try await withDatabases("phone", "tablet") { phone, tablet in
            _ = try phone.defaultCollection().putProperties(["n": 1], documentID: "from-phone")
            _ = try tablet.defaultCollection().putProperties(["n": 2], documentID: "from-tablet")
            let listener = try await listener(serving: tablet, tls: false) { $0.readOnly = true }
            var config = ReplicatorConfiguration(target: URLEndpoint(url: wire.url(try #require(listener.urls.first))))
            config.addCollection(try phone.defaultCollection())
            let replicator = Replicator(config: config)
            let refused = Recorded<Int>()
            let queue = DispatchQueue(label: "documents")
            let token = replicator.addDocumentReplicationListener(withQueue: queue) { replication in
                for document in replication.documents where replication.isPush {
                    refused.append(document.error?.status ?? 0)
                }
            }
            defer { token.remove() }
            try await replicator.run()
            queue.sync {}  // the listener has heard every batch
            #expect(try phone.defaultCollection().document(id: "from-tablet")?.int(forKey: "n") == 2)
            #expect(try tablet.defaultCollection().document(id: "from-phone") == nil)
            #expect(refused.values == [403])
            await listener.stop()
        }
    }
}

/// The listener's REST endpoints as PouchDB and `curl` use them: documents, `_bulk_docs`, `_all_docs`, `_changes`
/// (normal, longpoll, continuous), `_revs_diff`, `_bulk_get`, `open_revs`, `_local`, and errors.
@Suite(.timeLimit(.minutes(5))) struct URLEndpointListenerRESTTests {
    private struct Reply {
        var status: Int
        var json: JSONValue
    }

    private func call(_ method: HTTPMethod, _ url: String, _ body: String? = nil) async throws -> Reply {
        var request = HTTPClientRequest(url: url)
        request.method = method
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 1 << 24)
        return Reply(status: Int(response.status.code), json: (try? JSONValue(parsing: Array(buffer: bytes))) ?? .null)
    }

    @Test func documentsChangesAndReplicationEndpointsAnswerAsCouchDB() async throws {
        let directory = TemporaryDirectory()
        let db = try directory.open("notes")
        defer { try? db.close() }
        var config = URLEndpointListenerConfiguration(collections: [try db.defaultCollection()])
        config.networkInterface = "127.0.0.1"
        config.disableTLS = true
        let listener = URLEndpointListener(config: config)
        try await listener.start()
        let server = "http://127.0.0.1:\(try #require(listener.port))"
        let base = "\(server)/notes"

        #expect(try await call(.GET, server).json["couchdb"] == "Welcome")
        #expect(try await call(.GET, "\(server)/_all_dbs").json == ["notes"])
        #expect(try await call(.GET, "\(server)/nope").status == 404)

        let created = try await call(.PUT, "\(base)/doc1", #"{"title": "first"}"#)
        #expect(created.status == 201)
        let firstRevision = try #require(created.json["rev"]?.stringValue)
        #expect(firstRevision.hasPrefix("1-"))
        #expect(try await call(.GET, "\(base)/doc1").json["title"] == "first")
        #expect(try await call(.PUT, "\(base)/doc1", #"{"title": "again"}"#).json["error"] == "conflict")
        let updated = try await call(.PUT, "\(base)/doc1", #"{"_rev": "\#(firstRevision)", "title": "second"}"#)
        #expect(updated.json["rev"]?.stringValue?.hasPrefix("2-") == true)
        #expect(try await call(.PUT, "\(base)/doc2", "{not json").status == 400)

        let bulk = try await call(.POST, "\(base)/_bulk_docs", #"{"docs": [{"_id": "a", "n": 1}, {"_id": "b", "n": 2}]}"#)
        #expect(bulk.status == 201)
        #expect(bulk.json.arrayValue?.compactMap { $0["ok"]?.boolValue } == [true, true])
        let posted = try await call(.POST, base, #"{"n": 3}"#)
        #expect(posted.status == 201)

        let all = try await call(.GET, "\(base)/_all_docs?include_docs=true")
        #expect(all.json["total_rows"] == 4)
        let rows = all.json["rows"]?.arrayValue ?? []
        let named = rows.filter { ["a", "b", "doc1"].contains($0["id"]?.stringValue ?? "") }
        #expect(named.compactMap { $0["id"]?.stringValue } == ["a", "b", "doc1"])
        #expect(named.first?["doc"]?["n"] == 1)

        // A revision made elsewhere, with its history.
        let existing = #"{"_rev": "3-c", "_revisions": {"start": 3, "ids": ["c", "b", "a"]}, "v": 1}"#
        #expect(try await call(.PUT, "\(base)/x?new_edits=false", existing).status == 201)
        #expect(try await call(.GET, "\(base)/x?revs=true").json["_revisions"]?["ids"] == ["c", "b", "a"])
        let diff = try await call(.POST, "\(base)/_revs_diff", #"{"x": ["3-c", "4-d"], "new": ["1-z"]}"#)
        #expect(diff.json["x"]?["missing"] == ["4-d"])
        #expect(diff.json["new"]?["missing"] == ["1-z"])
        let bulkGet = try await call(.POST, "\(base)/_bulk_get?revs=true", #"{"docs": [{"id": "x", "rev": "3-c"}, {"id": "gone"}]}"#)
        let results = bulkGet.json["results"]?.arrayValue ?? []
        #expect(results.first?["docs"]?[0]?["ok"]?["v"] == 1)
        #expect(results.last?["docs"]?[0]?["error"]?["error"] == "not_found")
        let open = try await call(.GET, "\(base)/x?open_revs=all")
        #expect(open.json.arrayValue?.first?["ok"]?["_rev"] == "3-c")

        // Checkpoints.
        let local = try await call(.PUT, "\(base)/_local/checkpoint", #"{"last_seq": "5"}"#)
        #expect(local.json["rev"] == "0-1")
        #expect(try await call(.GET, "\(base)/_local/checkpoint").json["last_seq"] == "5")
        #expect(try await call(.PUT, "\(base)/_local/checkpoint", #"{"_rev": "0-7", "last_seq": "6"}"#).status == 409)

        // Deletion.
        let secondRevision = try #require(updated.json["rev"]?.stringValue)
        #expect(try await call(.DELETE, "\(base)/doc1?rev=\(secondRevision)").status == 200)
        let deleted = try await call(.GET, "\(base)/doc1")
        #expect(deleted.status == 404)
        #expect(deleted.json["reason"] == "deleted")

        // Changes: normal, then a longpoll that a later write ends.
        let changes = try await call(.GET, "\(base)/_changes?since=0")
        let changed = changes.json["results"]?.arrayValue ?? []
        let changedIDs = Set(changed.compactMap { $0["id"]?.stringValue })
        #expect(changedIDs.isSuperset(of: ["a", "b", "x", "doc1"]))
        #expect(changed.first { $0["id"] == "doc1" }?["deleted"] == true)
        let lastSequence = try #require(changes.json["last_seq"]?.intValue)
        async let longpoll = call(.GET, "\(base)/_changes?feed=longpoll&since=\(lastSequence)&timeout=60000")
        _ = try db.defaultCollection().putProperties(["n": 4], documentID: "late")
        #expect(try await longpoll.json["results"]?[0]?["id"] == "late")

        // A continuous feed: every row so far, then later ones as they come.
        var request = HTTPClientRequest(url: "\(base)/_changes?feed=continuous&since=0&heartbeat=500")
        request.method = .GET
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        var lines: [JSONValue] = []
        var pending: [UInt8] = []
        var wroteLater = false
        for try await chunk in response.body {
            pending += Array(buffer: chunk)
            while let newline = pending.firstIndex(of: 10) {
                let line = Array(pending[..<newline])
                pending.removeSubrange(...newline)
                if !line.isEmpty { lines.append(try JSONValue(parsing: line)) }
            }
            if !wroteLater, lines.contains(where: { $0["id"] == "late" }) {
                wroteLater = true
                _ = try db.defaultCollection().putProperties(["n": 5], documentID: "later")
            }
            if lines.contains(where: { $0["id"] == "later" }) { break }
        }
        #expect(lines.last?["id"] == "later")
        await listener.stop()
    }
}

/// A third-party BLIP client, PyPI's `pythonblip` (pull only), pulls from a listener over `/{db}/_blipsync` as it
/// pulls from Sync Gateway: checkpoint, `subChanges`, `changes`, the `rev`s it stores, its checkpoint write.
@Suite(
    .timeLimit(.minutes(5)),
    .enabled(
        if: PythonOracle.isRequired || PythonOracle.pythonblip.shared != nil,
        "pythonblip is not installed (make oracles) and PyPI is out of reach"))
struct URLEndpointListenerPythonBLIPTests {
    @Test("pythonblip pulls a listener's documents with their bodies and saves its checkpoint")
    func pull() async throws {
        let oracle = try #require(PythonOracle.pythonblip.shared, "CI=true: the pythonblip oracle must be installed")
        try await withDatabases("tablet", "unused") { tablet, _ in
            let documents = try tablet.defaultCollection()
            _ = try documents.putProperties(["name": "Groceries"], documentID: "list1")
            let first = try documents.putProperties(["n": 1], documentID: "list2")
            _ = try documents.putProperties(["n": 2, "_rev": try #require(first.revisionID)], documentID: "list2")
            var config = URLEndpointListenerConfiguration(collections: [documents])
            config.networkInterface = "127.0.0.1"
            config.disableTLS = true
            config.authenticator = ListenerPasswordAuthenticator(user: "sync", password: "s3cret")
            let listener = URLEndpointListener(config: config)
            try await listener.start()
            let port = try #require(listener.port)
            let files = TemporaryDirectory()
            let folder = files.path
            let pulled = try await offCooperativeThreads {
                try oracle.pullWithPythonBLIP(
                    port: Int(port), database: "tablet", user: "sync", password: "s3cret", into: folder)
            }
            await listener.stop()
            #expect(pulled.documents == ["list1": ["name": "Groceries"], "list2": ["n": 2]])
            // The checkpoint it saved: the sequence of the last `rev`, as pythonblip keeps it.
            #expect(pulled.checkpoint?["remote"] == "3")
        }
    }
}
