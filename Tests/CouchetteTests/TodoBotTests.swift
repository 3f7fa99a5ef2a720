import AsyncHTTPClient
import CouchetteCore
import CouchetteTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// The tutorial's bot (`todo-bot`, examples/todo/bot) as a process against a gateway process: it gives the
/// "Coffee" and "Potatoes" tasks their image through `_bulk_docs`, leaves other tasks alone, and keeps following
/// the changes feed.
@Suite(.timeLimit(.minutes(5))) struct TodoBotTests {
    private func call(_ method: HTTPMethod, _ url: String, _ body: String? = nil) async throws -> (Int, [UInt8]) {
        var request = HTTPClientRequest(url: url)
        request.method = method
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        return (Int(response.status.code), Array(buffer: try await response.body.collect(upTo: 1 << 20)))
    }

    @Test func theBotAttachesTheTutorialsImagesToMatchingTasks() async throws {
        let directory = TemporaryDirectory()
        let publicPort = try freeLoopbackPort()
        let adminPort = try freeLoopbackPort()
        try """
            {"interface": "127.0.0.1:\(publicPort)", "adminInterface": "127.0.0.1:\(adminPort)",
             "databases": {"todo": {"server": "walrus:"}}}
            """.write(toFile: directory.path + "/gateway.json", atomically: true, encoding: .utf8)
        let gateway = try ChildProcess(try ChildProcess.builtProduct("couchette-gateway"), [directory.path + "/gateway.json"])
        defer { gateway.terminate() }
        // Waits for processes happen off the cooperative threads, which other tests' tasks need meanwhile.
        try await gateway.waitForOutput(within: .seconds(60)) { $0.contains("Admin interface listening") }
        let admin = "http://127.0.0.1:\(adminPort)/todo"
        let list = #""taskList": {"id": "user1.list", "owner": "user1"}, "complete": false"#
        #expect(try await call(.PUT, "\(admin)/task1", #"{"type": "task", "task": "Coffee", \#(list)}"#).0 == 201)
        #expect(try await call(.PUT, "\(admin)/task2", #"{"type": "task", "task": "Milk", \#(list)}"#).0 == 201)

        let bot = try ChildProcess(
            try ChildProcess.builtProduct("todo-bot"), ["--url", "http://127.0.0.1:\(adminPort)", "--db", "todo", "--timeout", "5000"])
        defer { bot.kill() }
        try await bot.waitForOutput(within: .seconds(60)) { $0.contains("1 change posted") }

        let (status, body) = try await call(.GET, "\(admin)/task1")
        #expect(status == 200)
        let document = try JSONValue(parsing: body)
        #expect(document["_attachments"]?["image"]?["content_type"] == "image/png")
        let (imageStatus, image) = try await call(.GET, "\(admin)/task1/image")
        #expect(imageStatus == 200 && image.starts(with: [0x89, 0x50, 0x4E, 0x47]))  // a PNG
        #expect(try JSONValue(parsing: try await call(.GET, "\(admin)/task2").1)["_attachments"] == nil)

        // Later tasks too: the bot keeps following the feed (and does not attach twice: the new revision of
        // task1 has an attachment).
        #expect(try await call(.PUT, "\(admin)/task3", #"{"type": "task", "task": "potatoes", \#(list)}"#).0 == 201)
        try await bot.waitForOutput(within: .seconds(60)) { $0.components(separatedBy: "1 change posted").count == 3 }
        let potatoes = try JSONValue(parsing: try await call(.GET, "\(admin)/task3").1)
        #expect(potatoes["_attachments"]?["image"]?["length"] == 79)
        #expect(try JSONValue(parsing: try await call(.GET, "\(admin)/task1").1)["_rev"]?.stringValue?.hasPrefix("2-") == true)
    }
}
