import CouchetteTestSupport
import Couchette
import CouchetteCore
import Foundation
import NIOSSL
import Testing

@testable import CouchetteGateway

// MARK: - ReplicatorTLSTests

/// `pinnedServerCertificate` and `acceptOnlySelfSignedServerCertificate` against a TLS server on loopback (a
/// recording proxy terminating TLS in front of a gateway): the expected certificate replicates, any other stops the
/// replicator at once with `.tlsCertificateUntrusted`, and without either setting an unknown authority is refused.
@Suite("Replicator TLS certificate checks", .timeLimit(.minutes(3)))
struct ReplicatorTLSTests {
    typealias LiteDatabase = ReplicatorGatewayTests.LiteDatabase

    /// Pushes one document through `https://127.0.0.1:<port>/todo` with `configure`; the replicator's status.
    static func push(
        port: Int, over transport: ReplicationProtocol = .rest, _ configure: (inout ReplicatorConfiguration) -> Void
    ) async throws -> Replicator.Status {
        let phone = try LiteDatabase("phone")
        _ = try phone.lists.putProperties(["type": "task-list", "name": "Secure"], documentID: "list")
        var config = ReplicatorConfiguration(target: URLEndpoint(url: transport.url(port: port, secure: true)))
        config.addCollection(try phone.lists)
        config.replicatorType = .push
        config.maxAttempts = 3
        config.maxAttemptWaitTime = 0.01
        configure(&config)
        let replicator = Replicator(config: config)
        _ = try? await replicator.run()
        return replicator.status
    }

    /// Runs a guest gateway behind a TLS proxy presenting `identity` (and `chain`).
    static func withTLSGateway(
        _ identity: TestCertificates.Identity, chain: [TestCertificates.Identity] = [],
        _ body: (HTTPTestClient, BoundPorts, RecordingHTTPProxy) async throws -> Void
    ) async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            try await RecordingHTTPProxy.run(
                targetPort: ports.publicPort, tls: try identity.serverConfiguration(chain: chain)
            ) { proxy in try await body(client, ports, proxy) }
        }
    }

    @Test("A pinned certificate: the server presenting it replicates; another one stops the replicator as untrusted")
    func pinnedCertificate() async throws {
        let server = try TestCertificates.selfSigned()
        let other = try TestCertificates.selfSigned("another server")
        try await Self.withTLSGateway(server) { client, ports, proxy in
            let accepted = try await Self.push(port: proxy.port) { $0.pinnedServerCertificate = server.der }
            #expect(accepted.error == nil)
            #expect(try await client.send(port: ports.adminPort, path: "/todo/list").status == 200)

            proxy.clear()
            let refused = try await Self.push(port: proxy.port) { $0.pinnedServerCertificate = other.der }
            #expect(refused.error?.code == .tlsCertificateUntrusted)
            #expect(proxy.exchanges.isEmpty, "no request reached the server")

            // Without a pinned certificate, an authority nobody trusts is refused too.
            let system = try await Self.push(port: proxy.port) { _ in }
            #expect(system.error?.code == .tlsCertificateUntrusted)
        }
    }

    @Test("Only self-signed: a self-signed server replicates; a certificate from an authority is refused")
    func onlySelfSigned() async throws {
        let server = try TestCertificates.selfSigned()
        try await Self.withTLSGateway(server) { client, ports, proxy in
            let accepted = try await Self.push(port: proxy.port) { $0.acceptOnlySelfSignedServerCertificate = true }
            #expect(accepted.error == nil)
            #expect(try await client.send(port: ports.adminPort, path: "/todo/list").status == 200)
        }
        let (authority, leaf) = try TestCertificates.authorityAndLeaf()
        try await Self.withTLSGateway(leaf, chain: [authority]) { _, _, proxy in
            let refused = try await Self.push(port: proxy.port) { $0.acceptOnlySelfSignedServerCertificate = true }
            #expect(refused.error?.code == .tlsCertificateUntrusted)
            #expect(refused.error?.message.contains("not self-signed") == true)
            #expect(proxy.exchanges.isEmpty)
        }
    }

    @Test("Pinning the leaf an authority signed: that server replicates")
    func pinnedAuthoritySignedLeaf() async throws {
        let (authority, leaf) = try TestCertificates.authorityAndLeaf()
        try await Self.withTLSGateway(leaf, chain: [authority]) { client, ports, proxy in
            let accepted = try await Self.push(port: proxy.port) { $0.pinnedServerCertificate = leaf.der }
            #expect(accepted.error == nil, "\(accepted.error.map { "\($0)" } ?? "")")
            #expect(try await client.send(port: ports.adminPort, path: "/todo/list").status == 200)
        }
    }

    @Test(
        "The gateway serves HTTPS with SSLCert/SSLKey: replication over https, the admin port stays plain",
        arguments: ReplicationProtocol.allCases)
    func gatewayServesHTTPS(transport: ReplicationProtocol) async throws {
        let server = try TestCertificates.selfSigned()
        try await server.withHTTPSConfig { config in
            try await GatewayFixture.withRunningGateway(config) { client, ports in
                let pushed = try await Self.push(port: ports.publicPort, over: transport) {
                    $0.pinnedServerCertificate = server.der
                }
                #expect(pushed.error == nil)
                #expect(try await client.send(port: ports.adminPort, path: "/todo/list").status == 200)

                let tablet = try LiteDatabase("tablet")
                var pull = ReplicatorConfiguration(
                    target: URLEndpoint(url: transport.url(port: ports.publicPort, secure: true)))
                pull.addCollection(try tablet.lists)
                pull.replicatorType = .pull
                pull.acceptOnlySelfSignedServerCertificate = true
                let replicator = Replicator(config: pull)
                try await replicator.run()
                #expect(try tablet.lists.document(id: "list")?.string(forKey: "name") == "Secure")

                // Plain HTTP to the public port gets no answer as HTTP, and the system's authorities do not trust it.
                await #expect(throws: (any Error).self) { _ = try await client.send(port: ports.publicPort, path: "/") }
                let untrusted = try await Self.push(port: ports.publicPort, over: transport) { _ in }
                #expect(untrusted.error?.code == .tlsCertificateUntrusted)
            }
        }
    }
}
