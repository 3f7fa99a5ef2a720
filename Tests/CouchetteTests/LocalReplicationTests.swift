import Couchette
import CouchetteTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

/// Local-to-local replication (``DatabaseEndpoint``): convergence, checkpoints, conflicts and their resolution,
/// attachments, filters.
@Suite(.timeLimit(.minutes(5))) struct LocalReplicationTests {
    private func replicate(
        _ db: Database, with other: Database, _ type: ReplicatorType = .pushAndPull, reset: Bool = false,
        configure: (inout CollectionConfiguration) -> Void = { _ in }
    ) async throws -> Replicator {
        var collection = CollectionConfiguration(collection: try db.defaultCollection())
        configure(&collection)
        var config = ReplicatorConfiguration(collections: [collection], target: DatabaseEndpoint(database: other))
        config.replicatorType = type
        config.batchSize = 3  // several batches, several checkpoints
        let replicator = Replicator(config: config)
        try await replicator.run(reset: reset)
        return replicator
    }

    /// Every document's leaves (winner first) in a collection.
    private func leaves(_ db: Database) throws -> [String: [String]] {
        let collection = try db.defaultCollection()
        var result: [String: [String]] = [:]
        for change in try collection.changes(since: 0) {
            result[change.documentID] = try collection.leafRevisions(documentID: change.documentID).compactMap(\.revisionID)
        }
        return result
    }

    @Test func pushAndPullConvergeWithHistoryDeletionsAndAttachments() async throws {
        try await withDatabases("phone", "tablet") { phone, tablet in
            let lists = try phone.defaultCollection()
            for index in 0..<10 {
                _ = try lists.putProperties(["type": "task-list", "name": "List \(index)"], documentID: "list\(index)")
            }
            let edited = try #require(try lists.currentRevision(documentID: "list1")).createRevision()
            edited.userProperties = ["type": "task-list", "name": "Renamed"]
            edited.setAttachment(named: "photo", contentType: "image/png", content: Data("pixels".utf8))
            _ = try edited.save()
            _ = try #require(try lists.currentRevision(documentID: "list2")).deleteDocument()
            _ = try tablet.defaultCollection().putProperties(["type": "task", "title": "Milk"], documentID: "task1")

            let replicator = try await replicate(phone, with: tablet)
            #expect(replicator.status.activity == .stopped)
            #expect(replicator.status.error == nil)
            #expect(replicator.status.progress.completed == replicator.status.progress.total)
            #expect(try leaves(phone) == leaves(tablet))
            #expect(try leaves(tablet).count == 11)
            let copy = try #require(try tablet.defaultCollection().currentRevision(documentID: "list1"))
            #expect(copy.properties?["name"] as? String == "Renamed")
            #expect(try copy.history().count == 2)
            #expect(copy.attachment(named: "photo")?.content == Data("pixels".utf8))
            #expect(try tablet.defaultCollection().currentRevision(documentID: "list2")?.isDeletion == true)
            #expect(try phone.defaultCollection().currentRevision(documentID: "task1")?.properties?["title"] as? String == "Milk")
        }
    }

    @Test func checkpointsMakeTheNextRunSendOnlyNewChanges() async throws {
        try await withDatabases("phone", "tablet") { phone, tablet in
            let lists = try phone.defaultCollection()
            for index in 0..<7 { _ = try lists.putProperties(["n": index], documentID: "doc\(index)") }
            let first = try await replicate(phone, with: tablet, .push)
            #expect(first.status.progress.total == 7)
            let again = try await replicate(phone, with: tablet, .push)
            #expect(again.status.progress.total == 0)
            _ = try lists.putProperties(["n": 7], documentID: "doc7")
            let incremental = try await replicate(phone, with: tablet, .push)
            #expect(incremental.status.progress.total == 1)
            #expect(try leaves(tablet).count == 8)
            // A reset examines everything again, and changes nothing.
            let reset = try await replicate(phone, with: tablet, .push, reset: true)
            #expect(reset.status.progress.total == 8)
            #expect(try leaves(phone) == leaves(tablet))
        }
    }

    @Test func concurrentEditsBecomeTheSameConflictOnBothSidesAndAMergeResolvesIt() async throws {
        try await withDatabases("phone", "tablet") { phone, tablet in
            _ = try phone.defaultCollection().putProperties(["type": "task", "title": "Milk"], documentID: "task")
            _ = try await replicate(phone, with: tablet)
            for (db, title) in [(phone, "Oat milk"), (tablet, "Soy milk")] {
                let edit = try #require(try db.defaultCollection().currentRevision(documentID: "task")).createRevision()
                edit.userProperties = ["type": "task", "title": title]
                _ = try edit.save()
            }
            _ = try await replicate(phone, with: tablet)
            for db in [phone, tablet] {
                #expect(try db.defaultCollection().conflictingRevisions(documentID: "task").count == 2)
            }
            #expect(try leaves(phone) == leaves(tablet))

            // The app merges on the phone (the seeds' n-way merge): the winner gets the merged title, the other branch
            // a tombstone.
            let conflicting = try phone.defaultCollection().conflictingRevisions(documentID: "task")
            try phone.inTransaction {
                for (index, revision) in conflicting.enumerated() {
                    let next = revision.createRevision()
                    if index == 0 {
                        next.userProperties = ["type": "task", "title": "Oat and soy milk"]
                    } else {
                        next.isDeletion = true
                    }
                    _ = try next.saveAllowingConflict()
                }
                return true
            }
            _ = try await replicate(phone, with: tablet)
            for db in [phone, tablet] {
                #expect(try db.defaultCollection().conflictingRevisions(documentID: "task").count == 1)
                let current = try db.defaultCollection().currentRevision(documentID: "task")
                #expect(current?.properties?["title"] as? String == "Oat and soy milk")
            }
            #expect(try leaves(phone) == leaves(tablet))
        }
    }

    /// Makes concurrent edits of "task" on both databases (`nil` deletes), syncs twice with `resolver` on the
    /// phone's pulls, and returns the task as both sides then hold it (nil when deleted).
    private func resolve(
        phoneEdit: String?, tabletEdit: String?, with resolver: any ConflictResolverProtocol
    ) async throws -> (phone: SavedRevision?, tablet: SavedRevision?, phoneLeaves: Int, tabletLeaves: Int) {
        var outcome: (phone: SavedRevision?, tablet: SavedRevision?, phoneLeaves: Int, tabletLeaves: Int)?
        try await withDatabases("phone", "tablet") { phone, tablet in
            _ = try phone.defaultCollection().putProperties(["title": "Milk"], documentID: "task")
            _ = try await replicate(phone, with: tablet)
            for (db, title) in [(phone, phoneEdit), (tablet, tabletEdit)] {
                let current = try #require(try db.defaultCollection().currentRevision(documentID: "task"))
                _ = try title.map { try current.createRevision(properties: ["title": $0]) } ?? current.deleteDocument()
            }
            for _ in 0..<2 {
                _ = try await replicate(phone, with: tablet) { $0.conflictResolver = resolver }
            }
            #expect(try leaves(phone) == leaves(tablet))
            func live(_ db: Database) throws -> Int {
                try db.defaultCollection().leafRevisions(documentID: "task").filter { !$0.isDeletion }.count
            }
            outcome = (
                try phone.defaultCollection().currentRevision(documentID: "task"),
                try tablet.defaultCollection().currentRevision(documentID: "task"), try live(phone), try live(tablet)
            )
        }
        return try #require(outcome)
    }

    @Test func theDefaultResolverKeepsTheSameWinnerOnBothSides() async throws {
        let result = try await resolve(phoneEdit: "Oat milk", tabletEdit: "Soy milk", with: ConflictResolver.default)
        #expect(result.phoneLeaves == 1 && result.tabletLeaves == 1)
        #expect(result.phone?.revisionID == result.tablet?.revisionID)
        let title = result.phone?.properties?["title"] as? String
        #expect(title == "Oat milk" || title == "Soy milk")
    }

    @Test func aDeletionWinsOverAnEdit() async throws {
        let result = try await resolve(phoneEdit: "Oat milk", tabletEdit: nil, with: ConflictResolver.deletesWin)
        #expect(result.phoneLeaves == 0 && result.tabletLeaves == 0)
        #expect(result.phone?.isDeletion == true && result.tablet?.isDeletion == true)
    }

    @Test func theLastWriterWinsAndAMergeClosureIsSavedEverywhere() async throws {
        let pulled = try await resolve(phoneEdit: "Oat milk", tabletEdit: "Soy milk", with: ConflictResolver.lastWriteWins)
        #expect(pulled.phone?.properties?["title"] as? String == "Soy milk")  // the tablet's, pulled by the phone
        #expect(pulled.phoneLeaves == 1 && pulled.tabletLeaves == 1)
        let merge = ConflictResolver.custom { conflict in
            let titles = [conflict.localDocument, conflict.remoteDocument].compactMap { $0?.string(forKey: "title") }
            let merged = conflict.localDocument?.toMutable()
            merged?.setString(titles.sorted().joined(separator: " and "), forKey: "title")
            return merged
        }
        let merged = try await resolve(phoneEdit: "Oat milk", tabletEdit: "Soy milk", with: merge)
        #expect(merged.phone?.properties?["title"] as? String == "Oat milk and Soy milk")
        #expect(merged.tablet?.revisionID == merged.phone?.revisionID)
        #expect(merged.phoneLeaves == 1 && merged.tabletLeaves == 1)
    }

    @Test("A kept local revision's attachment, saved on top of the pulled one, goes to the other side with its bytes")
    func aKeptLocalAttachmentTravelsAfterTheResolution() async throws {
        try await withDatabases("phone", "tablet") { phone, tablet in
            _ = try phone.defaultCollection().putProperties(["title": "Milk"], documentID: "task")
            _ = try await replicate(phone, with: tablet)
            // The phone adds an attachment (revpos 2) while the tablet edits the title.
            let withFile = try #require(try phone.defaultCollection().currentRevision(documentID: "task")).createRevision()
            withFile.setAttachment(named: "note.txt", contentType: "text/plain", content: Data("bring a bag".utf8))
            _ = try withFile.save()
            _ = try #require(try tablet.defaultCollection().currentRevision(documentID: "task"))
                .createRevision(properties: ["title": "Oat milk"])
            // The phone pulls the tablet's edit and keeps its own: the resolution goes on top of the tablet's
            // revision (generation 2), so the attachment's revpos must be the new revision's, or the push would
            // take the tablet for holding it already.
            _ = try await replicate(phone, with: tablet, .pull) {
                $0.conflictResolver = ConflictResolver.custom { $0.localDocument }
            }
            _ = try await replicate(phone, with: tablet, .push)
            let onTablet = try #require(try tablet.defaultCollection().currentRevision(documentID: "task"))
            #expect(onTablet.revisionID == (try phone.defaultCollection().currentRevision(documentID: "task")?.revisionID))
            #expect(onTablet.attachment(named: "note.txt")?.content == Data("bring a bag".utf8))
        }
    }

    @Test func pushAndPullFiltersSkipTheRevisionsTheyRefuse() async throws {
        try await withDatabases("phone", "tablet") { phone, tablet in
            let lists = try phone.defaultCollection()
            _ = try lists.putProperties(["type": "task-list", "name": "Groceries"], documentID: "list")
            _ = try lists.putProperties(["type": "task", "title": "Milk"], documentID: "task")
            _ = try await replicate(phone, with: tablet, .push) { collection in
                collection.pushFilter = { document, _ in document.string(forKey: "type") == "task-list" }
            }
            #expect(try leaves(tablet).keys.sorted() == ["list"])
            // The tablet deletes the list; a pull that refuses deletions keeps it on the phone.
            _ = try #require(try tablet.defaultCollection().currentRevision(documentID: "list")).deleteDocument()
            let seen = Recorded<DocumentFlags>()
            _ = try await replicate(phone, with: tablet, .pull) { collection in
                collection.pullFilter = { _, flags in
                    seen.append(flags)
                    return !flags.contains(.deleted)
                }
            }
            #expect(seen.values == [.deleted])
            #expect(try lists.currentRevision(documentID: "list")?.isDeletion == false)
        }
    }

    @Test func documentReplicationEventsNameEachDocumentWithItsDirection() async throws {
        try await withDatabases("phone", "tablet") { phone, tablet in
            _ = try phone.defaultCollection().putProperties(["v": 1], documentID: "mine")
            let gone = try tablet.defaultCollection().putProperties(["v": 2], documentID: "theirs")
            _ = try gone.deleteDocument()
            var config = ReplicatorConfiguration(target: DatabaseEndpoint(database: tablet))
            config.addCollection(try phone.defaultCollection())
            let replicator = Replicator(config: config)
            let events = Recorded<DocumentReplication>()
            let queue = DispatchQueue(label: "document events")
            let token = replicator.addDocumentReplicationListener(withQueue: queue) { events.append($0) }
            defer { token.remove() }
            try await replicator.run()
            queue.sync {}  // the listener has run for every batch
            #expect(events.values.allSatisfy { $0.replicator === replicator })
            let pushed = events.values.filter(\.isPush).flatMap(\.documents)
            let pulled = events.values.filter { !$0.isPush }.flatMap(\.documents)
            #expect(pushed.map(\.id) == ["mine"])
            #expect(pulled.map(\.id) == ["theirs"])
            #expect(pulled.first?.flags == .deleted)
            #expect(pulled.first?.collection == "_default" && pulled.first?.error == nil)
        }
    }

    @Test func pendingDocumentsAreThoseChangedSinceTheLastPush() async throws {
        try await withDatabases("phone", "tablet") { phone, tablet in
            let lists = try phone.defaultCollection()
            _ = try lists.putProperties(["v": 1], documentID: "a")
            var config = ReplicatorConfiguration(target: DatabaseEndpoint(database: tablet))
            config.addCollection(lists)
            config.replicatorType = .push
            let replicator = Replicator(config: config)
            #expect(try replicator.pendingDocumentIds(collection: lists) == ["a"])
            try await replicator.run()
            #expect(try replicator.pendingDocumentIds(collection: lists).isEmpty)
            _ = try lists.putProperties(["v": 2], documentID: "b")
            #expect(try replicator.isDocumentPending("b", collection: lists))
            #expect(try !replicator.isDocumentPending("a", collection: lists))
        }
    }

    @Test func askingForPendingDocumentsCreatesNothingInTheTarget() async throws {
        try await withDatabases("phone", "tablet") { phone, tablet in
            let tasks = try phone.createCollection(name: "tasks", scope: "todo")
            _ = try tasks.putProperties(["v": 1], documentID: "a")
            var config = ReplicatorConfiguration(target: DatabaseEndpoint(database: tablet))
            config.addCollection(tasks)
            config.replicatorType = .push
            let replicator = Replicator(config: config)
            #expect(try replicator.pendingDocumentIds(collection: tasks) == ["a"])
            #expect(try tablet.collection(name: "tasks", scope: "todo") == nil)
            try await replicator.run()
            #expect(try replicator.pendingDocumentIds(collection: tasks).isEmpty)
            #expect(try tablet.collection(name: "tasks", scope: "todo")?.count == 1)
        }
    }

    @Test func aPullFilteredByDocumentIDsBringsOnlyThose() async throws {
        try await withDatabases("phone", "server") { phone, server in
            for id in ["a", "b", "c"] { _ = try server.defaultCollection().putProperties(["id": id], documentID: id) }
            _ = try await replicate(phone, with: server, .pull) { $0.documentIDs = ["a", "c"] }
            #expect(try leaves(phone).keys.sorted() == ["a", "c"])
        }
    }

    @Test func aContinuousReplicatorForwardsLaterChangesUntilStopped() async throws {
        try await withDatabases("phone", "tablet") { phone, tablet in
            var config = ReplicatorConfiguration(target: DatabaseEndpoint(database: tablet))
            config.addCollection(try phone.defaultCollection())
            config.continuous = true
            let replicator = Replicator(config: config)
            let statuses = replicator.changes()
            let arrivals = try tablet.defaultCollection().documentChanges(id: "late")
            replicator.start()
            _ = try await first(of: statuses, within: .seconds(60), "the replicator going idle") { $0.status.activity == .idle }
            _ = try phone.defaultCollection().putProperties(["written": "after the start"], documentID: "late")
            let arrival = await next(arrivals)
            #expect(arrival?.documentID == "late")
            #expect(try tablet.defaultCollection().currentRevision(documentID: "late")?.properties?["written"] as? String
                == "after the start")
            replicator.stop()
            _ = try await first(of: statuses, within: .seconds(60), "the replicator stopping") { $0.status.activity == .stopped }
            #expect(replicator.status.activity == .stopped)
            #expect(replicator.status.error == nil)
        }
    }
}

@Suite(.timeLimit(.minutes(5))) struct ReplicatorRetryTests {
    @Test func anUnreachableTargetMakesTheReplicatorGoOfflineRetryAndStopWithANetworkError() async throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        // A port bound but not listening, held for the whole test: connections are refused at once, and no other
        // test's server can take the port meanwhile.
        let (port, holder) = try #require(Self.closedLoopbackPort())
        defer { close(holder) }
        var config = ReplicatorConfiguration(target: URLEndpoint(url: URL(string: "http://127.0.0.1:\(port)/todo")!))
        config.addCollection(try db.defaultCollection())
        config.maxAttempts = 3
        config.maxAttemptWaitTime = 0.01
        let replicator = Replicator(config: config)
        let seen = Recorded<Replicator.ActivityLevel>()
        let queue = DispatchQueue(label: "statuses")
        let token = replicator.addChangeListener(withQueue: queue) { change in
            #expect(change.replicator === replicator)
            seen.append(change.status.activity)
        }
        defer { token.remove() }
        await #expect(throws: CouchetteError.self) { try await replicator.run() }
        queue.sync {}  // the listener has heard every status
        #expect(replicator.status.error?.code == .network)
        #expect(replicator.status.activity == .stopped)
        #expect(seen.values.contains(.offline))
        #expect(seen.values.filter { $0 == .busy }.count >= 3)  // every attempt
    }

    /// A loopback port the system gave a socket that is closed again.
    /// A loopback port bound by a socket that does not listen, and that socket (the caller closes it).
    static func closedLoopbackPort() -> (port: UInt16, descriptor: Int32)? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            return nil
        }
        return (UInt16(bigEndian: address.sin_port), descriptor)
    }
}
