import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

/// MIME plumbing without HTTP: header values, multipart bodies, documents in `multipart/related` form, `Accept`
/// negotiation and byte ranges.
@Suite(.timeLimit(.minutes(5))) struct MultipartTests {
    // MARK: - Header values

    @Test func headerValuesParseQuotedAndBareParameters() {
        let type = HeaderValue(parsing: #"Multipart/Related; boundary="a;b\"c" ; charset=utf-8"#)
        #expect(type.mediaType == "multipart/related" && type.isMultipart)
        #expect(type.parameters == ["boundary": #"a;b"c"#, "charset": "utf-8"])
        let disposition = HeaderValue(parsing: #"attachment; FILENAME="dir/my \"file\".txt""#)
        #expect(disposition.value == "attachment" && disposition.parameters["filename"] == #"dir/my "file".txt"#)
        #expect(HeaderValue("attachment", parameters: ["filename": #"a"b\c"#]).description == #"attachment; filename="a\"b\\c""#)
        #expect(HeaderValue(parsing: "application/json").parameters.isEmpty)
    }

    // MARK: - Bodies

    @Test func bodiesRoundTripThroughMultipartKit() throws {
        let binary = (0..<1000).map { UInt8($0 % 256) }
        let body = MultipartBody(
            subtype: "related",
            parts: [.json(["_id": "doc"]), MIMEPart(body: binary, contentType: "image/png", filename: "a b.png"),
                    MIMEPart(body: [], contentType: "text/plain")])
        #expect(body.contentType == #"multipart/related; boundary="\#(body.boundary)""#)
        let parsed = try MultipartBody(parsing: body.serialized(), contentType: body.contentType)
        #expect(parsed.subtype == "related" && parsed.parts.count == 3)
        #expect(parsed.parts[0].contentType?.mediaType == "application/json")
        #expect(try JSONValue(parsing: parsed.parts[0].body) == ["_id": "doc"])
        #expect(parsed.parts[1].body == binary && parsed.parts[1].filename == "a b.png")
        #expect(parsed.parts[2].body.isEmpty)
    }

    @Test func bodiesWithAPreambleAndNestedPartsParse() throws {
        let inner = MultipartBody(subtype: "related", parts: [.json(["a": 1]), MIMEPart(body: [1, 2, 3], contentType: "x/y")])
        let outer = MultipartBody(subtype: "mixed", parts: [MIMEPart(nested: inner), .jsonError(["missing": "1-a"])])
        let bytes = Array("preamble text\r\n".utf8) + outer.serialized()
        let parsed = try MultipartBody(parsing: bytes, contentType: outer.contentType)
        #expect(parsed.parts.count == 2)
        let nestedType = try #require(parsed.parts[0].headers[.contentType])
        let nested = try MultipartBody(parsing: parsed.parts[0].body, contentType: nestedType)
        #expect(nested.parts.map(\.body) == inner.parts.map(\.body))
        #expect(parsed.parts[1].contentType?.parameters["error"] == "true")
    }

    @Test func emptyBodiesHaveNoParts() throws {
        let empty = MultipartBody(subtype: "mixed", parts: [])
        #expect(String(decoding: empty.serialized(), as: UTF8.self) == "--\(empty.boundary)--\r\n")
        #expect(try MultipartBody(parsing: empty.serialized(), contentType: empty.contentType).parts.isEmpty)
    }

    @Test func malformedBodiesAreBadRequests() {
        let good = MultipartBody(subtype: "related", boundary: "XyZ", parts: [.json(["a": 1])]).serialized()
        #expect(throws: CoreError.self) { try MultipartBody(parsing: good, contentType: "multipart/related") }
        #expect(throws: CoreError.self) { try MultipartBody(parsing: good, contentType: "application/json; boundary=XyZ") }
        // Truncated: no closing delimiter.
        #expect(throws: CoreError.self) {
            try MultipartBody(parsing: Array(good.dropLast(10)), contentType: "multipart/related; boundary=XyZ")
        }
        // A header line without a colon.
        let broken = Array("--XyZ\r\nnot a header\r\n\r\nbody\r\n--XyZ--\r\n".utf8)
        #expect(throws: CoreError.self) { try MultipartBody(parsing: broken, contentType: "multipart/related; boundary=XyZ") }
    }

    // MARK: - Documents

    private func related(_ json: JSONValue, _ parts: [MIMEPart]) -> MultipartBody {
        MultipartBody(subtype: "related", parts: [.json(json)] + parts)
    }

    @Test func documentPartsMatchByFilenameThenDigestThenOrder() throws {
        let one = Array("one".utf8), two = Array("two".utf8), three = Array("three".utf8)
        let json: JSONValue = [
            "_attachments": [
                "a": ["follows": true], "b": ["follows": true, "digest": .string(AttachmentDigest.md5(of: two).description)],
                "c": ["follows": true], "d": ["stub": true, "revpos": 1],
            ],
        ]
        // Out of order: c by filename, b by digest, a by order.
        let document = try MultipartDocument(
            related(json, [
                MIMEPart(body: three, contentType: "text/plain", filename: "c"),
                MIMEPart(body: two, contentType: "text/plain"),
                MIMEPart(body: one, contentType: "text/plain"),
            ]))
        #expect(document.attachmentBodies == ["a": one, "b": two, "c": three])
        #expect(document.body == json)
        #expect(throws: GatewayError.self) { try MultipartDocument(self.related(json, [MIMEPart(body: one, contentType: "x/y")])) }
        let tooMany = Array(repeating: MIMEPart(body: one, contentType: "x/y"), count: 4)
        #expect(throws: GatewayError.self) { try MultipartDocument(self.related(json, tooMany)) }
        #expect(throws: GatewayError.self) { try MultipartDocument(MultipartBody(subtype: "related", parts: [])) }
        #expect(throws: GatewayError.self) {
            try MultipartDocument(MultipartBody(subtype: "related", parts: [MIMEPart(body: Array("[1]".utf8), contentType: "application/json")]))
        }
        #expect(throws: GatewayError.self) {
            try MultipartDocument(MultipartBody(subtype: "related", parts: [MIMEPart(body: one, contentType: "text/plain")]))
        }
    }

    @Test func revisionsInlineSmallAttachmentsAndLetLargeOnesFollow() throws {
        let small = Array(repeating: UInt8(ascii: "s"), count: 200)
        let large = Array(repeating: UInt8(ascii: "L"), count: 201)
        let revision = DocumentRevision(
            body: [
                "_id": "doc", "_rev": "2-b",
                "_attachments": [
                    "small": ["content_type": "text/plain", "length": 200, "revpos": 2, "digest": "sha1-x"],
                    "large": ["content_type": "image/png", "length": 201, "revpos": 2, "digest": "sha1-y"],
                    "old": ["stub": true, "revpos": 1, "digest": "sha1-z"],
                ],
            ],
            attachmentBodies: ["small": small, "large": large])
        let body = revision.multipartRelated()
        #expect(body.subtype == "related" && body.parts.count == 2)
        let json = try JSONValue(parsing: body.parts[0].body)
        #expect(json["_attachments"]?["small"]?["data"] == .string(Data(small).base64EncodedString()))
        #expect(json["_attachments"]?["large"]?["follows"] == true && json["_attachments"]?["large"]?["data"] == nil)
        #expect(json["_attachments"]?["old"]?["stub"] == true)
        #expect(body.parts[1].body == large && body.parts[1].filename == "large")
        #expect(body.parts[1].headers[.contentType] == "image/png")
        // In multipart/mixed: a nested multipart/related with the document headers.
        let part = revision.mixedPart()
        #expect(part.contentType?.mediaType == "multipart/related")
        #expect(part.header("X-Doc-ID") == "doc" && part.header("x-rev-id") == "2-b")
        // Without bodies: plain JSON.
        let plain = DocumentRevision(body: ["_id": "doc", "_rev": "1-a"]).mixedPart()
        #expect(plain.headers[.contentType] == "application/json" && plain.header("X-Rev-ID") == "1-a")
        // The JSON form inlines everything.
        #expect(revision.json["_attachments"]?["large"]?["data"] == .string(Data(large).base64EncodedString()))
    }

    // MARK: - Accept

    @Test(arguments: [
        (nil, true, true, false),
        ("*/*", true, true, false),
        ("application/json", true, false, false),
        ("multipart/related", false, true, true),
        ("multipart/mixed, application/json;q=0.5", true, true, true),
        ("application/json;q=0, multipart/mixed", false, true, true),
        ("application/*", true, false, false),
        ("text/html", false, false, false),
    ] as [(String?, Bool, Bool, Bool)])
    func acceptHeadersAllowJSONAndMultipart(header: String?, json: Bool, multipart: Bool, names: Bool) {
        let accept = AcceptHeader(header)
        #expect(accept.allowsJSON == json)
        #expect(accept.allowsMultipart == multipart)
        #expect(accept.namesMultipart == names)
        if json || multipart {
            #expect(throws: Never.self) { try accept.requireJSONOrMultipart() }
        } else {
            #expect(throws: GatewayError(statusCode: 406, reason: "Response format not acceptable")) {
                try accept.requireJSONOrMultipart()
            }
        }
    }

    // MARK: - Ranges

    @Test func byteRangesFollowRFC7233() throws {
        #expect(try AttachmentByteRange(header: "bytes=0-9", length: 100)?.bounds == 0...9)
        #expect(try AttachmentByteRange(header: "bytes=90-200", length: 100)?.bounds == 90...99)
        #expect(try AttachmentByteRange(header: "bytes=95-", length: 100)?.contentRange == "bytes 95-99/100")
        #expect(try AttachmentByteRange(header: "bytes=-10", length: 100)?.bounds == 90...99)
        #expect(try AttachmentByteRange(header: "bytes=-500", length: 100)?.bounds == 0...99)
        for ignored in [nil, "items=0-1", "bytes=5-1", "bytes=0-1,4-5", "bytes=a-b", "bytes=5"] {
            #expect(try AttachmentByteRange(header: ignored, length: 100) == nil)
        }
        for unsatisfiable in ["bytes=100-", "bytes=100-200", "bytes=-0"] {
            #expect(throws: AttachmentByteRange.unsatisfiable(length: 100)) {
                try AttachmentByteRange(header: unsatisfiable, length: 100)
            }
        }
        #expect(JSONRenderer().response(for: AttachmentByteRange.unsatisfiable(length: 7)).headers[.contentRange] == "bytes */7")
    }
}
