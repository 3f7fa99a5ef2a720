// swift-tools-version: 6.2
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "couchette",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "Couchette", targets: ["Couchette"]),
        .library(name: "CouchetteGateway", targets: ["CouchetteGateway"]),
        .library(name: "CouchetteCore", targets: ["CouchetteCore"]),
        .library(name: "CouchetteBLIP", targets: ["CouchetteBLIP"]),
        .executable(name: "couchette-gateway", targets: ["CouchetteGatewayServer"]),
        .executable(name: "couchette", targets: ["CouchetteCLI"]),
        .executable(name: "couchette-bench", targets: ["CouchetteBenchmarks"]),
        .executable(name: "todo-bot", targets: ["TodoBot"]),
        .executable(name: "todo", targets: ["TodoApp"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.0"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket.git", from: "1.6.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/vapor/multipart-kit.git", from: "4.7.0"),
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "4.0.0"..<"5.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.20.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.30.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.5.0"),
    ],
    targets: [
        // MARK: - C shims
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CJavaScriptCore",
            pkgConfig: "javascriptcoregtk-4.1",
            providers: [.apt(["libjavascriptcoregtk-4.1-dev"])]
        ),
        .systemLibrary(
            name: "CEditLine",
            pkgConfig: "libedit",
            providers: [.apt(["libedit-dev"])]
        ),
        .systemLibrary(
            name: "CCrypt",
            providers: [.apt(["libcrypt-dev"])]
        ),
        .systemLibrary(
            name: "CZlib",
            providers: [.apt(["zlib1g-dev"])]
        ),

        // MARK: - Libraries
        .target(
            name: "CouchetteCore",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CouchetteBLIP",
            dependencies: [
                "CZlib", "CouchetteCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "WSCore", package: "swift-websocket"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CCouchetteCipher",
            linkerSettings: [.linkedLibrary("crypto"), .linkedLibrary("sqlite3"), .linkedLibrary("pthread")]
        ),
        .target(
            name: "CouchetteSQLite",
            dependencies: ["CSQLite", "CCouchetteCipher"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Couchette",
            dependencies: [
                "CouchetteCore",
                "CouchetteBLIP",
                "CouchetteSQLite",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CouchetteGateway",
            dependencies: [
                "CouchetteCore",
                "CouchetteBLIP",
                "CouchetteSQLite",
                "CJavaScriptCore",
                "CCrypt",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            resources: [.copy("Resources/openapi"), .copy("Resources/admin")],
            swiftSettings: swiftSettings
        ),

        // MARK: - Executables
        .executableTarget(
            name: "TodoBot",
            dependencies: [
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
            ],
            path: "examples/todo/bot",
            exclude: ["openapi-generator-config.yaml"],
            sources: ["Sources"],
            resources: [.copy("Resources/apple.png"), .copy("Resources/coffee.png"), .copy("Resources/potatoes.png")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "TodoApp",
            dependencies: [
                "Couchette",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "examples/todo/app",
            exclude: ["prebuilt"],
            sources: ["Sources"],
            resources: [.copy("Resources/todo.couchette")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "CouchetteGatewayServer",
            dependencies: [
                "CouchetteGateway",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "CouchetteCLI",
            dependencies: [
                "Couchette",
                "CouchetteCore",
                "CEditLine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "CouchetteBenchmarks",
            dependencies: [
                "CouchetteCore", "CouchetteSQLite", "Couchette", "CSQLite", "CouchetteGateway", "CouchetteBLIP",
                // The private PostgreSQL server of the tests (postgres.*) and the byte-counting proxy (blip.delta-bytes).
                "CouchetteTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "WSClient", package: "swift-websocket"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: - Tests
        .target(
            name: "CouchetteTestSupport", dependencies: ["CouchetteCore"], path: "Tests/CouchetteTestSupport",
            swiftSettings: swiftSettings),
        .testTarget(
            name: "CouchetteCoreTests",
            dependencies: [
                "CouchetteCore", "CouchetteTestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CouchetteBLIPTests",
            dependencies: [
                "CouchetteBLIP", "CouchetteTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CouchetteSQLiteTests",
            dependencies: [
                "CouchetteSQLite", "CCouchetteCipher", "CSQLite", .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CouchetteTests",
            dependencies: [
                "Couchette", "CouchetteCore", "CouchetteSQLite", "CouchetteTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CouchetteClientTests",
            dependencies: ["Couchette"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CouchetteGatewayTests",
            dependencies: [
                "CouchetteGateway", "CouchetteTestSupport",
                "CouchetteCore",
                "CouchetteSQLite",
                "Couchette",
                "CJavaScriptCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
