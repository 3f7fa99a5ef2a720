import ArgumentParser
import Foundation
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime

/// `todo-bot`: the tutorial's bot (seed 002, "Changes feed" and "Bulk operations"). It follows the admin port's
/// `_changes` (longpoll, `include_docs`, `since` the last response's `last_seq`) and gives every `task` named
/// "apple", "coffee" or "potatoes" that has no attachment the matching image, through `_bulk_docs`. Its HTTP
/// client is generated from the gateway's OpenAPI description (`Generated/`, see
/// `scripts/generate-todo-bot-client.sh`), as the seed's bot uses a Swagger-generated one.
@main
struct TodoBot: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "todo-bot", abstract: "Attach images to the Todo app's apple, coffee and potatoes tasks.")

    @Option(help: "The gateway's admin URL.")
    var url = "http://localhost:4985"

    @Option(help: "The database.")
    var db = "todo"

    @Option(help: "How long each longpoll waits for changes, in milliseconds.")
    var timeout = 60_000

    func run() async throws {
        guard let server = URL(string: url) else { throw ValidationError("Not a URL: \(url)") }
        let client = Client(serverURL: server, transport: AsyncHTTPClientTransport())
        var since: String?
        while true {
            let response = try await client.get_db_changes(
                path: .init(db: db), query: .init(feed: .longpoll, since: since, include_docs: true, timeout: timeout))
            let feed = try response.ok.body.json
            Self.say("\(feed.results.count) change(s) received")
            for change in feed.results {
                guard let document = try Self.taskNeedingImage(change.doc) else { continue }
                try await attachImage(to: document, client: client)
            }
            since = feed.last_seq
        }
    }

    /// The document of a change when it is a live `task` without attachments whose text names one of the images,
    /// with that image's name.
    static func taskNeedingImage(_ body: OpenAPIObjectContainer?) throws -> (document: Components.Schemas.Document_hyphen_body, image: String)? {
        guard let body else { return nil }
        let json = try JSONEncoder().encode(body)
        let document = try JSONDecoder().decode(Components.Schemas.Document_hyphen_body.self, from: json)
        let properties = body.value
        guard document._deleted != true, document._attachments == nil, properties["type"] as? String == "task",
            let text = properties["task"] as? String, ["apple", "coffee", "potatoes"].contains(text.lowercased())
        else { return nil }
        return (document, text.lowercased())
    }

    private func attachImage(
        to task: (document: Components.Schemas.Document_hyphen_body, image: String), client: Client
    ) async throws {
        guard let png = Bundle.module.url(forResource: task.image, withExtension: "png").flatMap({ try? Data(contentsOf: $0) })
        else { throw ValidationError("The \(task.image) image is missing from the bot's resources") }
        var document = task.document
        document._attachments = .init(additionalProperties: [
            "image": Components.Schemas.Attachment(content_type: "image/png", data: Base64EncodedData(png))
        ])
        let response = try await client.post_db_bulk_docs(path: .init(db: db), body: .json(.init(docs: [document])))
        _ = try response.created
        Self.say("1 change posted")
    }

    /// A line on standard output, written at once (a pipe would otherwise hold it in a buffer).
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
