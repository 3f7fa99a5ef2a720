import Couchette
import CouchetteCore
import CouchetteTestSupport
import Foundation
import Testing

// MARK: - LoadBalancerTests

/// The example nginx configuration (`examples/nginx/couchette.conf`, Debian's nginx) in front of three gateway nodes
/// on one PostgreSQL database: Couchette Lite replicators through it and a PouchDB-style REST client on the nodes
/// themselves converge.
@Suite("nginx in front of three nodes", .timeLimit(.minutes(5)))
struct LoadBalancerTests {
    /// nginx running the example configuration, rewritten to the nodes' ports, in a folder of its own.
    final class Nginx {
        let child: ChildProcess
        let port: Int
        let folder: URL

        init(publicPorts: [Int]) throws {
            let binary = ["/usr/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }
            let nginx = try #require(binary, "nginx is missing: install Debian's nginx package (make deps does)")
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("nginx-\(UUID())")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            port = try freeLoopbackPort()
            let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("examples/nginx/couchette.conf")
            var site = try String(contentsOf: example, encoding: .utf8)
            for (index, node) in [4984, 5984, 6984].enumerated() {
                site = site.replacingOccurrences(of: "127.0.0.1:\(node) ", with: "127.0.0.1:\(publicPorts[index]) ")
            }
            site = site.replacingOccurrences(of: "listen 8984;", with: "listen 127.0.0.1:\(port);")
            try site.write(to: folder.appendingPathComponent("couchette.conf"), atomically: true, encoding: .utf8)
            let path = folder.path
            let main = """
                daemon off;
                master_process off;
                pid \(path)/nginx.pid;
                error_log \(path)/error.log;
                events {}
                http {
                    access_log off;
                    client_body_temp_path \(path)/body;
                    proxy_temp_path \(path)/proxy;
                    fastcgi_temp_path \(path)/fastcgi;
                    uwsgi_temp_path \(path)/uwsgi;
                    scgi_temp_path \(path)/scgi;
                    include \(path)/couchette.conf;
                }
                """
            try main.write(to: folder.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
            child = try ChildProcess(URL(fileURLWithPath: nginx), ["-p", path, "-c", "\(path)/nginx.conf"])
        }

        /// Kills nginx (it holds no state; in single-process mode it does not end promptly on SIGTERM).
        func stop() {
            child.kill()
            try? FileManager.default.removeItem(at: folder)
        }
    }

    /// Replicates a Lite collection with `url` once.
    private func replicate(_ collection: Collection, with url: String, _ type: ReplicatorType) async throws {
        var config = ReplicatorConfiguration(target: URLEndpoint(url: URL(string: url)!))
        config.addCollection(collection, config: CollectionConfiguration(collection: collection))
        config.replicatorType = type
        config.batchSize = 7
        let replicator = Replicator(config: config)
        try await replicator.run()
        #expect(replicator.status.error == nil, "\(String(describing: replicator.status.error))")
    }

    @Test("Lite replicators through nginx and a PouchDB-style client on the nodes converge")
    func replicationThroughTheBalancerConverges() async throws {
        let cluster = try await MultiNodeTests.Cluster(nodes: 3)
        defer { cluster.stop() }
        let nginx = try Nginx(publicPorts: cluster.nodes.map(\.publicPort))
        defer { nginx.stop() }
        let client = HTTPTestClient()
        defer { client.close() }
        // nginx says nothing when it is ready: ask until it answers (with the nodes' welcome).
        let nginxPort = nginx.port
        try await withDeadline(.seconds(30), "nginx answering") {
            while (try? await client.send(port: nginxPort, path: "/"))?.status != 200 {
                try await Task.sleep(for: .milliseconds(20))  // no event to wait on: ask again
            }
        }
        let balanced = "http://127.0.0.1:\(nginx.port)/db"

        let phoneFolder = FileManager.default.temporaryDirectory.appendingPathComponent("lite-\(UUID())").path
        let tabletFolder = FileManager.default.temporaryDirectory.appendingPathComponent("lite-\(UUID())").path
        defer {
            try? FileManager.default.removeItem(atPath: phoneFolder)
            try? FileManager.default.removeItem(atPath: tabletFolder)
        }
        var phoneConfig = DatabaseConfiguration()
        phoneConfig.directory = phoneFolder
        let phone = try Database(name: "phone", config: phoneConfig)
        var tabletConfig = DatabaseConfiguration()
        tabletConfig.directory = tabletFolder
        let tablet = try Database(name: "tablet", config: tabletConfig)
        defer {
            try? phone.close()
            try? tablet.close()
        }
        for index in 0..<30 {
            _ = try phone.defaultCollection().putProperties(["n": index, "from": "phone"], documentID: "phone-\(index)")
        }
        try await replicate(try phone.defaultCollection(), with: balanced, .push)

        // A PouchDB-style client pushes to node 2 as PouchDB does: _revs_diff, then _bulk_docs with new_edits=false.
        let pouchPort = cluster.nodes[1].publicPort
        let revisions = (0..<10).map { (id: "pouch-\($0)", rev: "1-\(String(repeating: "a", count: 31))\($0)") }
        let diff = try await client.send(
            "POST", port: pouchPort, path: "/db/_revs_diff",
            json: .object(Dictionary(uniqueKeysWithValues: revisions.map { ($0.id, [.string($0.rev)]) })))
        #expect(try diff.jsonValue().objectValue?.count == 10)
        let pushed = try await client.send(
            "POST", port: pouchPort, path: "/db/_bulk_docs",
            json: [
                "new_edits": false,
                "docs": .array(revisions.map { ["_id": .string($0.id), "_rev": .string($0.rev), "from": "pouch"] }),
            ])
        #expect(pushed.status == 201)

        // The tablet pulls through the balancer: the phone's and the PouchDB client's documents.
        try await replicate(try tablet.defaultCollection(), with: balanced, .pull)
        let tabletIDs = Set(try tablet.defaultCollection().changes(since: 0).map(\.documentID))
        #expect(tabletIDs.count == 40)
        // The PouchDB-style client reads node 3's feed: the same forty documents.
        let feed = try await client.send(port: cluster.nodes[2].publicPort, path: "/db/_changes")
        let feedIDs = Set(try feed.jsonValue()["results"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? [])
        #expect(feedIDs.filter { !$0.hasPrefix("_user/") } == tabletIDs)
        // An edit on the tablet goes up through the balancer and down to the phone.
        _ = try tablet.defaultCollection().putProperties(["n": 99, "from": "tablet"], documentID: "tablet-1")
        try await replicate(try tablet.defaultCollection(), with: balanced, .push)
        try await replicate(try phone.defaultCollection(), with: balanced, .pull)
        #expect(Set(try phone.defaultCollection().changes(since: 0).map(\.documentID)) == tabletIDs.union(["tablet-1"]))
    }
}
