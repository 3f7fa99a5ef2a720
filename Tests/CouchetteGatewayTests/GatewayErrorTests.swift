import Foundation
import Hummingbird
import Testing

@testable import CouchetteGateway

// MARK: - GatewayErrorTests

@Suite("Gateway errors", .timeLimit(.minutes(5)))
struct GatewayErrorTests {
    @Test(
        "Error names follow Sync Gateway's rule",
        arguments: [
            (400, "Bad Request"), (401, "Unauthorized"), (403, "Forbidden"), (404, "not_found"),
            (405, "Method Not Allowed"), (409, "conflict"), (412, "Precondition Failed"),
            (413, "Request Entity Too Large"), (415, "Unsupported Media Type"), (500, "Internal Server Error"),
            (503, "Service Unavailable"),
        ]
    )
    func errorNames(status: Int, name: String) {
        #expect(GatewayError(statusCode: status, reason: "r").error == name)
        #expect(GatewayError(statusCode: status, reason: "r").status.code == status)
    }

    @Test("Factories")
    func factories() {
        #expect(GatewayError.noSuchDatabase("x").reason == #"no such database "x""#)
        #expect(GatewayError.noSuchDatabase("x").statusCode == 404)
        #expect(GatewayError.unknownURL.reason == "unknown URL")
        #expect(GatewayError.methodNotAllowed("PUT", allowed: ["GET", "HEAD"]).remedy == .allowedMethods(["GET", "HEAD"]))
        #expect(GatewayError.tooManyRequests("slow down", retryAfter: .milliseconds(1500)).remedy == .retryAfter(seconds: 2))
        let config = GatewayError.invalidConfig(field: "databases.todo.revs_limit", problem: "expected an integer")
        #expect(config.reason == "databases.todo.revs_limit: expected an integer")
        #expect(config.field == "databases.todo.revs_limit")
        #expect(config.statusCode == 400)
        #expect(config.localizedDescription == config.reason)
    }

    @Test("Errors render as {\"error\", \"reason\"} JSON with their status")
    func rendering() throws {
        let response = JSONRenderer().response(for: .noSuchDatabase("nope"))
        #expect(response.status.code == 404)
        #expect(response.headers[.contentType] == "application/json")
        let expected = #"{"error":"not_found","reason":"no such database \"nope\""}"#
        #expect(response.body.contentLength == expected.utf8.count)
        let data = try JSONRenderer().data(["error": "not_found", "reason": #"no such database "nope""#])
        #expect(String(decoding: data, as: UTF8.self) == expected)
    }

    @Test("The HTTP layer gives each error the headers its status and remedy call for")
    func responseHeaders() {
        let renderer = JSONRenderer()
        #expect(renderer.response(for: .unauthorized()).headers[.wwwAuthenticate] == #"Basic realm="Couchbase Sync Gateway""#)
        #expect(renderer.response(for: .forbidden("wrong user")).headers[.wwwAuthenticate] == nil)
        #expect(renderer.response(for: .methodNotAllowed("PUT", allowed: ["GET", "HEAD"])).headers[.allow] == "GET, HEAD")
        #expect(renderer.response(for: .tooManyRequests("slow", retryAfter: .seconds(3))).headers[.retryAfter] == "3")
        #expect(renderer.response(for: .rangeNotSatisfiable(length: 10)).headers[.contentRange] == "bytes */10")
        #expect(renderer.response(for: GatewayError(statusCode: 422, reason: "r")).status.reasonPhrase == "Unprocessable Entity")
    }

    @Test("HEAD error responses have no body")
    func headHasNoBody() {
        let response = JSONRenderer().response(for: .unknownURL, method: .head)
        #expect(response.status.code == 404)
        #expect(response.body.contentLength == 0)
    }

    @Test("Pretty rendering sorts keys and indents")
    func prettyRendering() throws {
        let data = try JSONRenderer(pretty: true).data(["b": 1, "a": ["c": true]])
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\n"))
        #expect(text.range(of: "\"a\"")!.lowerBound < text.range(of: "\"b\"")!.lowerBound)
    }
}
