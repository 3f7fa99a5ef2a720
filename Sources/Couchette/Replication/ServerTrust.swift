import AsyncHTTPClient
import Foundation
#if canImport(Glibc)
    import Glibc
#endif
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization
import X509

// MARK: - ServerTrust

/// Which TLS certificates a replicator accepts from an `https` remote: the system's trusted authorities (the
/// default), exactly one pinned certificate (``ReplicatorConfiguration/pinnedServerCertificate``), or only a
/// self-signed one (``ReplicatorConfiguration/acceptOnlySelfSignedServerCertificate``, for peers that have no
/// certificate from an authority).
///
/// A pinned or self-signed certificate becomes the only trust root of the connections, and their host names are
/// not checked (the certificate itself is what is trusted), as Couchbase Lite does.
enum ServerTrust: Sendable, Hashable {
    case system
    case pinned(Data)
    case selfSignedOnly

    init(_ config: ReplicatorConfiguration) {
        if let certificate = config.pinnedServerCertificate {
            self = .pinned(certificate)
        } else if config.acceptOnlySelfSignedServerCertificate {
            self = .selfSignedOnly
        } else {
            self = .system
        }
    }

    /// The HTTP client for `url` under this trust. For `selfSignedOnly` the server's certificate is read first (at
    /// most `connectTimeout`) and must be self-signed.
    ///
    /// - Throws: `.tlsCertificateUntrusted` for a certificate that is not self-signed or a pinned certificate that is
    ///   not DER; `.network` when the server cannot be reached.
    func client(for url: URL) async throws -> HTTPClient {
        guard let root = try await trustRoot(for: url) else { return ReplicatorHTTPClient.shared }
        return try ReplicatorHTTPClient.trusting(onlyDER: root)
    }

    /// The TLS settings of a WebSocket to `url` (`wss`) under this trust: the system's roots, or the one certificate
    /// trusted with host names unchecked; nil for a `ws` URL.
    ///
    /// - Throws: As ``client(for:)``.
    func tlsConfiguration(for url: URL) async throws -> TLSConfiguration? {
        guard ["wss", "https"].contains(url.scheme?.lowercased()) else { return nil }
        guard let root = try await trustRoot(for: url) else { return TLSConfiguration.makeClientConfiguration() }
        return try Self.tlsConfiguration(trustingOnly: root)
    }

    /// TLS settings whose only trust root is the certificate `der`, host names not checked.
    ///
    /// - Throws: `.tlsCertificateUntrusted` when `der` is not a DER certificate.
    static func tlsConfiguration(trustingOnly der: Data) throws -> TLSConfiguration {
        let certificate: NIOSSLCertificate
        do { certificate = try NIOSSLCertificate(bytes: Array(der), format: .der) } catch {
            throw CouchetteError(.tlsCertificateUntrusted, message: "The pinned certificate is not DER: \(error)")
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([certificate])
        tls.certificateVerification = .noHostnameVerification
        return tls
    }

    /// The only certificate trusted for `url` (DER), nil when the system's authorities are: the pinned one (or its
    /// issuer, when it is not self-signed), or the server's own self-signed one.
    private func trustRoot(for url: URL) async throws -> Data? {
        guard ["https", "wss"].contains(url.scheme?.lowercased()) else { return nil }
        switch self {
        case .system:
            return nil
        case .pinned(let der):
            return Self.isSelfSigned(der) ? der : try await Self.issuerOfPinnedCertificate(der, at: url)
        case .selfSignedOnly:
            return try await Self.selfSignedCertificate(of: url)
        }
    }

    /// Whether DER bytes hold a self-signed certificate: issuer = subject, signed with its own key.
    private static func isSelfSigned(_ der: some DataProtocol) -> Bool {
        guard let certificate = try? Certificate(derEncoded: Array(der)) else { return false }
        return certificate.issuer == certificate.subject
            && certificate.publicKey.isValidSignature(certificate.signature, for: certificate)
    }

    /// For a pinned certificate an authority signed: checks that the server at `url` presents exactly it, and
    /// returns the top of the chain the server sent, to trust in its place (TLS here cannot take a leaf that is not
    /// self-signed as its only root).
    private static func issuerOfPinnedCertificate(_ pinned: Data, at url: URL) async throws -> Data {
        let host = url.host ?? "localhost"
        let port = url.port ?? 443
        let chain = try await ServerCertificateProbe.chain(host: host, port: port)
        guard let leaf = chain.first, let leafDER = try? leaf.toDERBytes(), Data(leafDER) == pinned else {
            throw CouchetteError(
                .tlsCertificateUntrusted, message: "\(host):\(port) does not present the pinned certificate")
        }
        guard let top = chain.last, let topDER = try? top.toDERBytes() else { return pinned }
        return Data(topDER)
    }

    /// The DER bytes of the certificate the server at `url` presents, when it is self-signed.
    private static func selfSignedCertificate(of url: URL) async throws -> Data {
        let host = url.host ?? "localhost"
        let port = url.port ?? 443
        let chain = try await ServerCertificateProbe.chain(host: host, port: port)
        guard let leaf = chain.first, let der = try? leaf.toDERBytes() else {
            throw CouchetteError(.tlsCertificateUntrusted, message: "\(host):\(port) presented no certificate")
        }
        guard Self.isSelfSigned(der) else {
            throw CouchetteError(
                .tlsCertificateUntrusted,
                message: "The certificate of \(host):\(port) is not self-signed (acceptOnlySelfSignedServerCertificate)")
        }
        return Data(der)
    }
}

// MARK: - ServerCertificateProbe


/// Reads the certificate chain a TLS server presents, trusting nothing: the handshake stops once the chain is seen.
enum ServerCertificateProbe {
    /// The chain (leaf first) that `host:port` presents.
    static func chain(host: String, port: Int, timeout: Duration = .seconds(10)) async throws -> [NIOSSLCertificate] {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .noHostnameVerification
        let context: NIOSSLContext
        do { context = try NIOSSLContext(configuration: tls) } catch {
            throw CouchetteError(.network, message: "TLS is not available: \(error)")
        }
        let group = MultiThreadedEventLoopGroup.singleton
        let seen = OncePromise(group.any().makePromise(of: [NIOSSLCertificate].self))
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(.init(timeout))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handler = try NIOSSLClientHandler(
                        context: context, serverHostname: Self.isIPAddress(host) ? nil : host
                    ) { certificates, verdict in
                        seen.succeed(certificates)
                        // Looked at, not trusted: the probe's connection ends here.
                        verdict.succeed(NIOSSLVerificationResult.failed)
                    }
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: host, port: port).get()
        } catch {
            seen.fail(error)
            throw CouchetteError(.network, message: "Cannot reach \(host):\(port): \(error)")
        }
        // A connection that ends, or a handshake that stalls, before the certificate is a network failure (retried).
        channel.closeFuture.whenComplete { _ in
            seen.fail(CouchetteError(.network, message: "\(host):\(port) closed before showing its certificate"))
        }
        let stalled = channel.eventLoop.scheduleTask(in: .init(timeout)) {
            seen.fail(CouchetteError(.network, message: "\(host):\(port) did not show its certificate within \(timeout)"))
        }
        defer { stalled.cancel() }
        defer { channel.close(promise: nil) }
        do {
            return try await seen.future.get()
        } catch let error as CouchetteError {
            throw error
        } catch {
            throw CouchetteError(.network, message: "Reading the certificate of \(host):\(port): \(error)")
        }
    }
}

extension ServerCertificateProbe {
    /// Whether `host` is an IPv4 or IPv6 literal (sent without a server name, which must be a DNS name).
    static func isIPAddress(_ host: String) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16)
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        return inet_pton(AF_INET, bare, &buffer) == 1 || inet_pton(AF_INET6, bare, &buffer) == 1
    }
}

/// A promise completed by whichever comes first (the chain, a failure, the connection closing); later ones are
/// ignored.
private final class OncePromise<Value: Sendable>: Sendable {
    private let promise: EventLoopPromise<Value>
    private let done = Mutex(false)

    init(_ promise: EventLoopPromise<Value>) { self.promise = promise }

    var future: EventLoopFuture<Value> { promise.futureResult }

    func succeed(_ value: Value) { if first() { promise.succeed(value) } }
    func fail(_ error: any Error) { if first() { promise.fail(error) } }

    private func first() -> Bool {
        done.withLock { done in
            defer { done = true }
            return !done
        }
    }
}

// MARK: - Clients trusting one certificate

extension ReplicatorHTTPClient {
    private static let trustingOne = Mutex<[Data: HTTPClient]>([:])

    /// A client whose only trust root is the certificate `der`, host names not checked; one per certificate, kept
    /// like ``shared``.
    static func trusting(onlyDER der: Data) throws -> HTTPClient {
        try trustingOne.withLock { clients in
            if let client = clients[der] { return client }
            var configuration = configuration
            configuration.tlsConfiguration = try ServerTrust.tlsConfiguration(trustingOnly: der)
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            clients[der] = client
            return client
        }
    }
}
