import CouchetteCore

extension BLIPMessage {
    /// The reply to a `changes` or `proposeChanges` message (spec: blip-sync-protocol.md §3.4, §3.5): a JSON array
    /// with one answer per entry — `0` for "not wanted" or "accepted", else the entry's answer — trailing zeros left
    /// out, deflated.
    public func reply(answers: [JSONValue], properties: BLIPProperties = [:]) -> BLIPMessage {
        var answers = answers
        while answers.last == 0 { answers.removeLast() }
        return reply(properties: properties, body: JSONValue.array(answers).serialized(), isCompressed: true)
    }
}
