import Testing

@testable import CouchetteGateway

// MARK: - InterfaceAddressTests

@Suite("Listen addresses", .timeLimit(.minutes(5)))
struct InterfaceAddressTests {
    @Test(
        "Valid addresses",
        arguments: [
            (":4984", "0.0.0.0", 4984),
            ("127.0.0.1:4985", "127.0.0.1", 4985),
            ("localhost:4985", "localhost", 4985),
            ("[::1]:4985", "::1", 4985),
            ("4984", "0.0.0.0", 4984),
            ("0.0.0.0:0", "0.0.0.0", 0),
            (" 10.0.0.1:80 ", "10.0.0.1", 80),
        ]
    )
    func valid(text: String, host: String, port: Int) throws {
        let address = try InterfaceAddress(parsing: text)
        #expect(address.host == host)
        #expect(address.port == port)
    }

    @Test(
        "Invalid addresses are rejected naming the field",
        arguments: ["", "localhost", "host:port", ":70000", ":-1", "::1:4985", "[::1]", "[::1:4985", "a b:1"])
    func invalid(text: String) throws {
        let error = try #require(throws: GatewayError.self) {
            try InterfaceAddress(parsing: text, field: "adminInterface")
        }
        #expect(error.field == "adminInterface")
        #expect(error.reason.hasPrefix("adminInterface: invalid address"))
    }

    @Test("Descriptions bracket IPv6 hosts")
    func descriptions() {
        #expect(InterfaceAddress(host: "::1", port: 4985).description == "[::1]:4985")
        #expect(InterfaceAddress.defaultPublic.description == "0.0.0.0:4984")
        #expect(InterfaceAddress.defaultAdmin.description == "127.0.0.1:4985")
    }
}
