import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

// MARK: - TLSIdentity

/// The certificate chain and private key a ``URLEndpointListener`` presents over TLS (Couchbase Lite's
/// `TLSIdentity`): read from PEM, or made up as an anonymous self-signed identity.
///
/// ```swift
/// config.tlsIdentity = try TLSIdentity(certificatePEMFile: "server.crt", privateKeyPEMFile: "server.key")
/// // or
/// config.tlsIdentity = try TLSIdentity.anonymous()
/// replicatorConfig.pinnedServerCertificate = config.tlsIdentity?.certificates.first
/// ```
public struct TLSIdentity: Sendable {
    /// The certificate chain, leaf first.
    let chain: [NIOSSLCertificate]
    /// The leaf's private key.
    let privateKey: NIOSSLPrivateKey

    /// The certificates, leaf first, DER-encoded (what ``ReplicatorConfiguration/pinnedServerCertificate`` takes).
    public var certificates: [Data] {
        chain.compactMap { try? Data($0.toDERBytes()) }
    }

    /// When the leaf certificate expires.
    public var expiration: Date {
        Date(timeIntervalSince1970: TimeInterval(chain.first?.notValidAfter ?? 0))
    }

    /// Reads an identity from PEM files: the certificate (chain) and its private key.
    ///
    /// - Throws: `.badInput` naming the file that cannot be read as PEM or holds no certificate.
    public init(certificatePEMFile: String, privateKeyPEMFile: String) throws {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificatePEMFile)
        } catch {
            throw CouchetteError(.badInput, message: "Cannot read a PEM certificate from \(certificatePEMFile): \(error)")
        }
        guard !chain.isEmpty else { throw CouchetteError(.badInput, message: "\(certificatePEMFile) holds no certificate") }
        do {
            privateKey = try NIOSSLPrivateKey(file: privateKeyPEMFile, format: .pem)
        } catch {
            throw CouchetteError(.badInput, message: "Cannot read a PEM private key from \(privateKeyPEMFile): \(error)")
        }
        self.chain = chain
    }

    private init(chain: [NIOSSLCertificate], privateKey: NIOSSLPrivateKey) {
        self.chain = chain
        self.privateKey = privateKey
    }

    /// A new self-signed identity (a P-256 key), valid from a minute ago for `validity`, for `localhost` and the
    /// loopback addresses; what a listener uses when it is given none.
    ///
    /// - Parameters:
    ///   - commonName: The certificate's subject and issuer common name.
    ///   - validity: How long it is valid.
    public static func anonymous(
        commonName: String = "Couchette listener", validity: Duration = .seconds(365 * 24 * 3600)
    ) throws -> TLSIdentity {
        let key = P256.Signing.PrivateKey()
        let now = Date()
        do {
            let name = try DistinguishedName { CommonName(commonName) }
            let certificate = try Certificate(
                version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
                notValidBefore: now.addingTimeInterval(-60),
                notValidAfter: now.addingTimeInterval(TimeInterval(validity.components.seconds)),
                issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    // No key usage: a self-signed certificate that names one must allow certificate signing to be
                    // its own trust root.
                    Critical(BasicConstraints.notCertificateAuthority)
                    try ExtendedKeyUsage([.serverAuth])
                    SubjectAlternativeNames([
                        .dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
                        .ipAddress(ASN1OctetString(contentBytes: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1])),
                    ])
                },
                issuerPrivateKey: .init(key))
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return TLSIdentity(
                chain: [try NIOSSLCertificate(bytes: serializer.serializedBytes, format: .der)],
                privateKey: try NIOSSLPrivateKey(bytes: Array(key.derRepresentation), format: .der))
        } catch {
            throw CouchetteError(.io, message: "Cannot make a self-signed certificate: \(error)")
        }
    }

    /// The server side of TLS with this identity.
    var serverConfiguration: TLSConfiguration {
        TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(privateKey))
    }
}
