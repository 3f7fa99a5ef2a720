// MARK: - BLIPSubprotocol

/// The WebSocket subprotocols of Couchbase Mobile replication over BLIP (spec: blip-sync-protocol.md §1.2): what a
/// replicator offers in `Sec-WebSocket-Protocol`, and how a passive side (the gateway's `_blipsync`, a Lite
/// listener) picks the one it echoes.
public enum BLIPSubprotocol {
    /// BLIP 3 carrying Couchbase Lite 3's replication messages (revocations included): what Couchette offers.
    public static let couchbaseMobile3 = "BLIP_3+CBMobile_3"
    /// BLIP 3 carrying Couchbase Lite 2's.
    public static let couchbaseMobile2 = "BLIP_3+CBMobile_2"
    /// The subprotocols a passive side speaks, preferred first (rev trees; `CBMobile_4`'s version vectors are not).
    public static let spoken = [couchbaseMobile3, couchbaseMobile2]

    /// The first offered subprotocol spoken here; the header may repeat and each value may list several.
    public static func chosen(offered values: [String]) -> String? {
        // Tokens hold no white space: what surrounds them goes.
        let offered = values.flatMap { $0.split(separator: ",") }.map { String($0.filter { $0 != " " && $0 != "\t" }) }
        return offered.first { spoken.contains($0) }
    }
}
