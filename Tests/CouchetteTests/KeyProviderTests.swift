import Couchette
import Foundation
import Testing

// MARK: - KeyProviderTests

/// Key providers: a raw key, and a password-protected key store whose password changes re-wrap the data key only.
@Suite(.timeLimit(.minutes(5))) struct KeyProviderTests {
    @Test func aKeyStoreProviderMakesAKeyOnceAndAWrongPasswordIs401() throws {
        let directory = TemporaryDirectory()
        let store = FileKeyStore(directory: (directory.path as NSString).appendingPathComponent("keys"))
        let provider = KeyStoreProvider(password: "first", identifier: "alice", store: store, iterations: 1_000)
        #expect(try !provider.exists())
        let db = try directory.open("alice") { $0.encryptionKeyProvider = provider }
        try EncryptionTests.fill(db, count: 10)
        try db.close()
        #expect(try provider.exists())
        let keyFile = (store.directory as NSString).appendingPathComponent("alice.key.json")
        let mode = try FileManager.default.attributesOfItem(atPath: keyFile)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        // The same password gives the same key; a wrong one is 401 and changes nothing.
        let again = try directory.open("alice") { $0.encryptionKeyProvider = provider }
        #expect(try again.defaultCollection().count == 10)
        try again.close()
        let wrong = KeyStoreProvider(password: "guess", identifier: "alice", store: store)
        let error = #expect(throws: CouchetteError.self) {
            _ = try directory.open("alice") { $0.encryptionKeyProvider = wrong }
        }
        #expect(error?.status == 401)

        // A new password re-wraps the key: the database opens with it, and no longer with the old one.
        let databaseBefore = try EncryptionTests.files(of: "alice", in: directory)
        #expect(throws: CouchetteError.self) { try wrong.changePassword(from: "guess", to: "x") }
        try provider.changePassword(from: "first", to: "second")
        #expect(try EncryptionTests.files(of: "alice", in: directory) == databaseBefore)
        let renewed = KeyStoreProvider(password: "second", identifier: "alice", store: store)
        let reopened = try directory.open("alice") { $0.encryptionKeyProvider = renewed }
        #expect(try reopened.defaultCollection().count == 10)
        try reopened.close()
        #expect(throws: CouchetteError.self) {
            _ = try directory.open("alice") { $0.encryptionKeyProvider = provider }
        }
        try renewed.delete()
        #expect(try !renewed.exists())
    }

    @Test func aRawKeyProviderOpensLikeTheKeyItself() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open("raw") { $0.encryptionKeyProvider = RawKeyProvider(key: EncryptionTests.rawKey) }
        try EncryptionTests.fill(db, count: 3)
        try db.close()
        let again = try directory.open("raw") { $0.encryptionKey = .key(EncryptionTests.rawKey) }
        #expect(try again.defaultCollection().count == 3)
        try again.close()
        let both = #expect(throws: CouchetteError.self) {
            _ = try directory.open("raw") {
                $0.encryptionKey = .key(EncryptionTests.rawKey)
                $0.encryptionKeyProvider = RawKeyProvider(key: EncryptionTests.rawKey)
            }
        }
        #expect(both?.code == .badInput)
    }
}

// MARK: - OfflineLoginTests

/// The tutorial's offline login: a database per user, a wrong password is 401, "Migrate" with the old password
/// keeps the data, "Delete" starts over.
@Suite(.timeLimit(.minutes(5))) struct OfflineLoginTests {
    @Test func theOfflineLoginFlowOfTheTutorial() throws {
        let directory = TemporaryDirectory()
        let login = OfflineLogin(
            directory: directory.path, keyStore: FileKeyStore(directory: (directory.path as NSString).appendingPathComponent("keys")))
        #expect(!login.hasDatabase(username: "user1"))
        let first = try login.openDatabase(username: "user1", password: "pass")
        _ = try first.defaultCollection().putProperties(["type": "task-list", "name": "Offline list"], documentID: "list1")
        try first.close()
        #expect(login.hasDatabase(username: "user1"))

        // Wrong password: 401, nothing lost.
        let wrong = #expect(throws: CouchetteError.self) { _ = try login.openDatabase(username: "user1", password: "nope") }
        #expect(wrong?.status == 401)

        // The password changed on the gateway: the new one does not open the database until "Migrate".
        #expect(throws: CouchetteError.self) { _ = try login.openDatabase(username: "user1", password: "newpass") }
        #expect(throws: CouchetteError.self) { try login.changePassword(username: "user1", from: "wrong", to: "newpass") }
        try login.changePassword(username: "user1", from: "pass", to: "newpass")
        let migrated = try login.openDatabase(username: "user1", password: "newpass")
        #expect(try migrated.defaultCollection().document(id: "list1") != nil)
        try migrated.close()

        // "Delete": a fresh, empty database for the same user.
        try login.resetDatabase(username: "user1")
        #expect(!login.hasDatabase(username: "user1"))
        let fresh = try login.openDatabase(username: "user1", password: "whatever")
        #expect(try fresh.defaultCollection().count == 0)
        try fresh.close()
    }
}
