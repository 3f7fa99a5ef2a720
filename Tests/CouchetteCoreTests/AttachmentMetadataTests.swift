import CouchetteCore
import Foundation
import Testing

@Suite(.timeLimit(.minutes(5))) struct AttachmentMetadataTests {
    @Test func computesAndParsesDigests() throws {
        let hello = Array("hello".utf8)
        #expect(AttachmentDigest.sha1(of: hello).description == "sha1-qvTGHdzF6KLavt4PO0gs2a6pQ00=")
        #expect(AttachmentDigest.md5(of: hello).description == "md5-XUFAKrxLKna5cZ2REBfFkg==")
        let parsed = try AttachmentDigest(parsing: "md5-XUFAKrxLKna5cZ2REBfFkg==")
        #expect(parsed.algorithm == .md5)
        #expect(parsed.matches(hello))
        #expect(!parsed.matches(Array("hellO".utf8)))
        #expect(AttachmentDigest.sha1(of: hello).hexString == "aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d")
    }

    @Test(arguments: ["sha1", "sha1-", "crc-AAAA", "sha1-!!!", "md5-qvTGHdzF6KLavt4PO0gs2a6pQ00="])
    func rejectsBadDigests(text: String) {
        #expect {
            try AttachmentDigest(parsing: text)
        } throws: { ($0 as? CoreError)?.code == .invalidAttachment }
    }

    @Test func readsStubsInlineDataAndFollows() throws {
        let stub = try AttachmentMetadata(json: [
            "content_type": "image/png", "digest": "sha1-qvTGHdzF6KLavt4PO0gs2a6pQ00=", "length": 5, "revpos": 2,
            "stub": true,
        ])
        #expect(stub.isStub && stub.revpos == 2 && stub.contentType == "image/png" && stub.length == 5)

        let inline = try AttachmentMetadata(json: ["content_type": "text/plain", "data": "aGVsbG8="])
        #expect(inline.data == Array("hello".utf8))
        #expect(inline.contentType == "text/plain")

        let follows = try AttachmentMetadata(json: [
            "follows": true, "length": 10, "digest": "sha1-qvTGHdzF6KLavt4PO0gs2a6pQ00=", "encoding": "gzip",
            "encoded_length": 8,
        ])
        #expect(follows.follows && follows.encoding == "gzip" && follows.encodedLength == 8)
        #expect(follows.contentType == AttachmentMetadata.defaultContentType)
    }

    @Test func roundTripsThroughJSON() throws {
        let meta = AttachmentMetadata(content: Array("hello".utf8), contentType: "text/plain", revpos: 3)
        #expect(meta.digest?.description == "sha1-qvTGHdzF6KLavt4PO0gs2a6pQ00=")
        #expect(try AttachmentMetadata(json: meta.json) == meta)
        let stub = meta.stub
        #expect(stub.isStub && stub.data == nil)
        #expect(try AttachmentMetadata(json: stub.json) == stub)
    }

    @Test(arguments: [
        JSONValue.string("x"),
        ["stub": true, "digest": "sha1-qvTGHdzF6KLavt4PO0gs2a6pQ00="],
        ["stub": true, "revpos": 0],
        ["data": "not base64!!"],
        ["data": "aGVsbG8=", "length": 4],
        ["data": "aGVsbG8=", "digest": "sha1-AAAAAAAAAAAAAAAAAAAAAAAAAAA="],
        ["data": "aGVsbG8=", "content_type": 5],
        ["length": -1, "stub": true, "revpos": 1],
        ["content_type": "text/plain"],
    ])
    func rejectsBadMetadata(json: JSONValue) {
        #expect {
            try AttachmentMetadata(json: json)
        } throws: { error in
            let error = error as? CoreError
            return error?.code == .invalidAttachment && error?.status == 400
        }
    }

    @Test func parseAllNamesTheAttachmentAtFault() {
        #expect {
            try AttachmentMetadata.parseAll(["good.txt": ["data": "aGVsbG8="], "bad.png": ["stub": true]])
        } throws: { ($0 as? CoreError)?.message.contains("bad.png") == true }
    }
}
