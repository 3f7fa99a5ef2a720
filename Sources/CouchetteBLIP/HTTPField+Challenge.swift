import HTTPTypes

extension HTTPField.Name {
    /// `Www-Authenticate`, spelt as Sync Gateway writes it (Go canonicalises header names so): HTTP names are
    /// case-insensitive, but Couchbase Lite's own tests read the challenge by that spelling, byte for byte.
    public static let syncGatewayChallenge = HTTPField.Name("Www-Authenticate")!
}
