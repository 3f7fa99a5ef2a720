import CouchetteGateway
import Foundation

// MARK: - Configuration and errors

extension CouchetteGatewayCommand {
    /// The configuration file (or the defaults) with the command-line overrides applied.
    func loadConfig() throws(GatewayError) -> GatewayConfig {
        var gatewayConfig = GatewayConfig()
        if config == nil {
            let location = try StorageLocation(parsing: url, field: "--url")
            gatewayConfig.databases = [dbname: DatabaseConfig(name: dbname, server: location)]
        }
        if let path = config {
            do {
                gatewayConfig = try GatewayConfig.load(contentsOf: path)
            } catch  where error.field != nil && !error.reason.contains(path) {
                // Say which file the field is in.
                var located = error
                located.reason = "\(path): \(error.reason)"
                throw located
            }
        }
        if let interface {
            gatewayConfig.interface = try InterfaceAddress(parsing: interface, field: "--interface")
        }
        if let adminInterface {
            gatewayConfig.adminInterface = try InterfaceAddress(parsing: adminInterface, field: "--adminInterface")
        }
        if let log {
            gatewayConfig.log += log.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        if pretty { gatewayConfig.pretty = true }
        return gatewayConfig
    }

    /// Prints `couchette-gateway: error: <message>` on one line to standard error.
    static func printError(_ error: any Error) {
        let message = (error as? GatewayError)?.reason ?? String(describing: error)
        let line = message.replacingOccurrences(of: "\n", with: " ")
        FileHandle.standardError.write(Data("couchette-gateway: error: \(line)\n".utf8))
    }
}
