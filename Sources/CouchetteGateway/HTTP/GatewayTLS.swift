import NIOSSL

// MARK: - GatewayTLS

/// The TLS settings of a listener from Sync Gateway's `SSLCert` and `SSLKey` keys: paths of PEM files holding the
/// certificate (chain) and its private key. Both or neither.
enum GatewayTLS {
    /// The server configuration, or nil when neither path is set.
    ///
    /// - Throws: ``GatewayError/invalidConfig(field:problem:)`` naming the key that is missing or whose file cannot
    ///   be read as PEM.
    static func configuration(certificatePath: String?, keyPath: String?) throws(GatewayError) -> TLSConfiguration? {
        guard certificatePath != nil || keyPath != nil else { return nil }
        guard let certificatePath else {
            throw .invalidConfig(field: "SSLCert", problem: "SSLKey is set without SSLCert: set both to serve HTTPS")
        }
        guard let keyPath else {
            throw .invalidConfig(field: "SSLKey", problem: "SSLCert is set without SSLKey: set both to serve HTTPS")
        }
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificatePath)
        } catch {
            throw .invalidConfig(field: "SSLCert", problem: "cannot read a PEM certificate from \(certificatePath): \(error)")
        }
        guard !chain.isEmpty else {
            throw .invalidConfig(field: "SSLCert", problem: "\(certificatePath) holds no certificate")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
        } catch {
            throw .invalidConfig(field: "SSLKey", problem: "cannot read a PEM private key from \(keyPath): \(error)")
        }
        return TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
    }
}
