import Crypto
import Foundation
import NIOSSL
import X509

@testable import CouchetteGateway

// MARK: - TestCertificates

/// Certificates made for TLS tests, in memory: self-signed ones, and a leaf signed by a made-up authority.
enum TestCertificates {
    /// A certificate with its private key.
    struct Identity {
        let certificate: Certificate
        let key: P256.Signing.PrivateKey

        /// Writes the certificate and its key as PEM files in `folder` (what `SSLCert` and `SSLKey` name).
        func writePEM(in folder: URL) throws -> (certificate: String, key: String) {
            let certificatePath = folder.appendingPathComponent("cert.pem").path
            let keyPath = folder.appendingPathComponent("key.pem").path
            try certificate.serializeAsPEM().pemString.write(toFile: certificatePath, atomically: true, encoding: .utf8)
            try key.pemRepresentation.write(toFile: keyPath, atomically: true, encoding: .utf8)
            return (certificatePath, keyPath)
        }

        /// Runs `body` with a guest gateway configuration (``AdminGatewayFixture/config(guest:)``) serving HTTPS with
        /// this identity, its PEM files written to a fresh folder that is removed afterwards.
        func withHTTPSConfig<T>(_ body: (GatewayConfig) async throws -> T) async throws -> T {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let pem = try writePEM(in: folder)
            var config = AdminGatewayFixture.config(guest: true)
            config.sslCert = pem.certificate
            config.sslKey = pem.key
            return try await body(config)
        }

        /// The certificate as DER bytes (what `pinnedServerCertificate` takes).
        var der: Data { Data(try! certificate.serializeAsPEM().derBytes) }

        /// A TLS server configuration presenting this certificate (and `chain` after it).
        func serverConfiguration(chain: [Identity] = []) throws -> TLSConfiguration {
            let certificates = try ([self] + chain).map { try NIOSSLCertificate(bytes: Array($0.der), format: .der) }
            let privateKey = try NIOSSLPrivateKey(bytes: Array(key.derRepresentation), format: .der)
            return TLSConfiguration.makeServerConfiguration(
                certificateChain: certificates.map { .certificate($0) }, privateKey: .privateKey(privateKey))
        }
    }

    /// A self-signed certificate for `127.0.0.1` and `localhost`.
    static func selfSigned(_ commonName: String = "couchette test server") throws -> Identity {
        try issue(commonName, by: nil, isAuthority: false)
    }

    /// A certificate authority and a leaf it signed.
    static func authorityAndLeaf() throws -> (authority: Identity, leaf: Identity) {
        let authority = try issue("couchette test authority", by: nil, isAuthority: true)
        return (authority, try issue("couchette test leaf", by: authority, isAuthority: false))
    }

    /// A new key and its certificate, signed by `issuer` (self-signed when nil).
    private static func issue(_ commonName: String, by issuer: Identity?, isAuthority: Bool) throws -> Identity {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName(commonName) }
        let certificate = try make(
            subject: name, issuer: issuer?.certificate.subject ?? name, key: key, signer: issuer?.key ?? key,
            isAuthority: isAuthority)
        return Identity(certificate: certificate, key: key)
    }

    private static func make(
        subject: DistinguishedName, issuer: DistinguishedName, key: P256.Signing.PrivateKey,
        signer: P256.Signing.PrivateKey, isAuthority: Bool
    ) throws -> Certificate {
        let now = Date()
        return try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(86_400),
            issuer: issuer, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                if isAuthority { Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil)) }
                SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(.init(contentBytes: [127, 0, 0, 1]))])
            },
            issuerPrivateKey: .init(signer))
    }
}
