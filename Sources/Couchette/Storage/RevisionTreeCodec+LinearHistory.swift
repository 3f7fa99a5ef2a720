import CouchetteCore

extension RevisionTreeCodec {
    /// A stored tree that is one branch (every revision the child of the one before), read as its entries' bytes:
    /// what most documents' trees are. A save on top of its current revision appends to it without building a
    /// ``CouchetteCore/RevisionTree``, and writes what ``encode(_:rawBodies:)`` would write for the tree that
    /// ``CouchetteCore/RevisionTree/addLocalEdit(parent:body:deleted:allowConflict:serializedBody:)`` and
    /// ``CouchetteCore/RevisionTree/prune(toDepth:)`` would make.
    struct LinearHistory {
        /// Each revision's ID as stored (a JSON string, quotes included) and whether it is a deletion, oldest first.
        private var entries: [(revision: ArraySlice<UInt8>, deleted: Bool)]

        /// The stored tree's branch when `bytes` hold one ending with `current`; nil for any other tree (or
        /// anything unusual: the caller then decodes the tree).
        init?(_ bytes: [UInt8], current: String) {
            var entries: [(revision: ArraySlice<UInt8>, deleted: Bool)] = []
            let found: Bool = bytes.withUnsafeBufferPointer { buffer in
                guard let ranges = JSONPathScanner.elementRanges(in: buffer) else { return false }
                entries.reserveCapacity(ranges.count + 1)
                for (index, entry) in ranges.enumerated() {
                    guard let fields = JSONPathScanner.elementRanges(in: UnsafeBufferPointer(rebasing: buffer[entry])),
                        fields.count == 4
                    else { return false }
                    let base = entry.lowerBound
                    let revision = (base + fields[0].lowerBound)..<(base + fields[0].upperBound)
                    let parent = buffer[(base + fields[1].lowerBound)..<(base + fields[1].upperBound)]
                    guard RevisionTreeCodec.isDecimal(parent, index - 1),
                        revision.count >= 2, buffer[revision.lowerBound] == UInt8(ascii: "\""),
                        !buffer[revision].contains(UInt8(ascii: "\\"))
                    else { return false }
                    let deleted = buffer[(base + fields[2].lowerBound)..<(base + fields[2].upperBound)]
                    guard deleted.elementsEqual("true".utf8) || deleted.elementsEqual("false".utf8) else { return false }
                    entries.append((bytes[revision], deleted.first == UInt8(ascii: "t")))
                }
                return true
            }
            guard found, let last = entries.last, !last.deleted,
                last.revision.dropFirst().dropLast().elementsEqual(current.utf8)
            else { return nil }
            self.entries = entries
        }

        /// The tree with `revision` (its text; not deleted) added as the child of the current revision, pruned to
        /// `maximumDepth` revisions, encoded. The current revision becomes the parent and keeps its body
        /// (`currentBody`); the new one's is the row's, and no older one keeps a body.
        func appending(_ revision: String, currentBody: [UInt8], maximumDepth: Int) -> [UInt8] {
            var all = entries
            all.append((ArraySlice(JSONValue.string(revision).serialized()), false))
            let kept = all.suffix(max(maximumDepth, 1))
            var output: [UInt8] = [UInt8(ascii: "[")]
            output.reserveCapacity(kept.count * 48 + currentBody.count)
            let null = Array("null".utf8)
            for (offset, entry) in kept.enumerated() {
                RevisionTreeCodec.appendEntry(
                    to: &output, revision: entry.revision, parent: offset - 1, deleted: entry.deleted,
                    body: offset == kept.count - 2 ? currentBody : null)
            }
            output.append(UInt8(ascii: "]"))
            return output
        }
    }
}
