import ArgumentParser
import Couchette
import Foundation

// MARK: - ServeCommand

/// `couchette serve -w DB [--port N]`: serves the collection over the CouchDB replication protocol with the
/// library's ``URLEndpointListener``, so another Couchette database, PouchDB or `curl` replicates with it, until
/// Ctrl-C or SIGTERM.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the database to peers over the CouchDB replication protocol (peer-to-peer listener).",
        discussion: """
            Peers replicate with the printed URL: `couchette pull -w other.couchette http://127.0.0.1:4988/todo`, \
            a Couchette replicator, PouchDB or curl. Writes need --writeable (-w) unless --readonly. Listens on \
            127.0.0.1 unless --interface says otherwise; plain HTTP unless --tls-cert/--tls-key or --tls (a \
            self-signed certificate made at start, which clients accept as self-signed). Stops on Ctrl-C or SIGTERM.
            """)

    @OptionGroup var options: DatabaseOptions

    @Option(help: "The TCP port (0: any free port; the URL printed tells which).")
    var port: UInt16 = 4988

    @Option(help: "The address to listen on: 127.0.0.1, 0.0.0.0 (every interface), ::1…")
    var interface = "127.0.0.1"

    @Flag(help: "Refuse document writes: peers can pull, not push.")
    var readonly = false

    @Option(help: "Require HTTP Basic credentials NAME:PASSWORD (the password is asked for when not given).")
    var user: String?

    @Option(help: "Serve HTTPS with this PEM certificate (chain); needs --tls-key.")
    var tlsCert: String?

    @Option(help: "The PEM private key of --tls-cert.")
    var tlsKey: String?

    @Flag(help: "Serve HTTPS with a self-signed certificate made at start.")
    var tls = false

    func run() throws {
        try reportingErrors {
            guard (tlsCert == nil) == (tlsKey == nil) else { throw CLIError.usage("Give both --tls-cert and --tls-key.") }
            let database = try options.open(writing: !readonly)
            defer { try? database.close() }
            var config = URLEndpointListenerConfiguration(collections: [try options.collection(in: database)])
            config.port = port
            config.networkInterface = interface
            config.readOnly = readonly
            if let tlsCert, let tlsKey {
                config.tlsIdentity = try TLSIdentity(certificatePEMFile: tlsCert, privateKeyPEMFile: tlsKey)
            } else if !tls {
                config.disableTLS = true
            }
            if let user {
                let (name, password) = try CredentialsOption.parse(user)
                config.authenticator = ListenerPasswordAuthenticator(user: name, password: password)
            }
            let listener = URLEndpointListener(config: config)
            let json = options.json
            let outcome = Blocking.run {
                try await listener.start()
                for url in listener.urls {
                    FileHandleOutput.standardOutput(
                        json ? JSONValue.object(["url": .string(url.absoluteString)]).serializedString() + "\n"
                            : "Serving \(url.absoluteString)\(readonly ? " (read-only)" : "")\n")
                }
                if !json { FileHandleOutput.standardOutput("Press Ctrl-C to stop.\n") }
                await Interruption.wait()
                await listener.stop()
            }
            if case .failure(let error) = outcome { throw error }
            if !json { FileHandleOutput.standardOutput("Stopped.\n") }
        }
    }
}
