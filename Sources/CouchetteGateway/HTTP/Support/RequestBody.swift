import CompressNIO
import CouchetteCore
import Foundation
import Hummingbird
import NIOCore

// MARK: - RequestBody

/// Reads request bodies within the configured size limit and parses JSON ones (spec: gateway-rest-api.md §1.5).
struct RequestBody: Sendable {
    /// The largest body accepted, in bytes.
    let limit: Int

    /// The whole body, gunzipped when sent with `Content-Encoding: gzip`.
    ///
    /// - Throws: 413 beyond ``limit`` (before or after decompression); 415 for another `Content-Encoding`;
    ///   400 for corrupt gzip data.
    func bytes(of request: Request) async throws(GatewayError) -> [UInt8] {
        let encoding = request.headers[.contentEncoding]?.lowercased() ?? "identity"
        guard encoding == "identity" || encoding == "gzip" else {
            throw .unsupportedMediaType("Unsupported Content-Encoding; use gzip or identity")
        }
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw tooLarge
        }
        var buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw tooLarge  // a chunked body past the limit, or one longer than its Content-Length said
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw tooLarge
        } catch {
            throw .badRequest("Could not read the request body")
        }
        if encoding == "gzip" {
            do {
                buffer = try buffer.decompress(with: .gzip(), maxSize: limit)
            } catch let error as CompressNIOError where error == .bufferOverflow {
                throw tooLarge
            } catch {
                throw .badRequest("Invalid gzip request body")
            }
        }
        return buffer.readBytes(length: buffer.readableBytes) ?? []
    }

    private var tooLarge: GatewayError {
        .payloadTooLarge("Request body too large (limit \(limit) bytes)")
    }

    /// The body parsed as JSON.
    ///
    /// - Throws: 415 unless `Content-Type` is absent or JSON; 400 "Bad JSON" for malformed or empty bodies.
    func json(of request: Request) async throws(GatewayError) -> JSONValue {
        try Self.requireJSONContentType(request)
        let bytes = try await bytes(of: request)
        return try Self.parse(bytes)
    }

    /// The body parsed as a JSON object.
    ///
    /// - Throws: As ``json(of:)``, and 400 when the body is not an object.
    func jsonObject(of request: Request) async throws(GatewayError) -> [String: JSONValue] {
        guard case .object(let object) = try await json(of: request) else {
            throw .badRequest("Request body must be a JSON object")
        }
        return object
    }

    /// Parses JSON bytes; 400 with the parser's message when malformed.
    static func parse(_ bytes: [UInt8]) throws(GatewayError) -> JSONValue {
        guard !bytes.isEmpty else { throw .badRequest("Document body is empty") }
        do {
            return try JSONValue(parsing: bytes)
        } catch {
            throw .badRequest("Bad JSON: \(error.message)")
        }
    }

    /// Throws 415 unless the request's `Content-Type` is absent or `application/json`.
    static func requireJSONContentType(_ request: Request) throws(GatewayError) {
        guard let contentType = request.headers[.contentType] else { return }
        let mediaType = contentType.split(separator: ";").first.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        guard mediaType == "application/json" || mediaType == "text/plain" else {
            throw .unsupportedMediaType("Invalid content type \(contentType)")
        }
    }
}
