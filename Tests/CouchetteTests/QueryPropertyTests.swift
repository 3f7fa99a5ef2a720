import Couchette
import CouchetteCore
import CouchetteTestSupport
import Foundation
import Testing

/// Random conditions built with the query builder select exactly the documents a Swift evaluation of the same
/// condition picks, and their SQL++ text (the query's `description`) selects the same.
@Suite(.timeLimit(.minutes(5))) struct QueryPropertyTests {
    /// A condition with its Swift meaning.
    struct Condition {
        var expression: any ExpressionProtocol
        var holds: ([String: Any]) -> Bool
    }

    /// A number-valued expression with its Swift meaning.
    struct Number {
        var expression: any ExpressionProtocol
        var value: ([String: Any]) -> Int
    }

    static func number(_ generator: inout SplitMix64, depth: Int) -> Number {
        switch Int.random(in: 0..<(depth < 2 ? 5 : 3), using: &generator) {
        case 0:
            let field = ["priority", "n"].randomElement(using: &generator)!
            return Number(expression: Expression.property(field)) { $0[field] as! Int }
        case 1:
            let constant = Int.random(in: -5...12, using: &generator)
            return Number(expression: Expression.int(constant)) { _ in constant }
        case 2:
            let field = ["priority", "n"].randomElement(using: &generator)!
            return Number(expression: Expression.negated(Expression.property(field))) { -($0[field] as! Int) }
        default:
            let (left, right) = (number(&generator, depth: depth + 1), number(&generator, depth: depth + 1))
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: return Number(expression: left.expression.add(right.expression)) { left.value($0) + right.value($0) }
            case 1: return Number(expression: left.expression.subtract(right.expression)) { left.value($0) - right.value($0) }
            default: return Number(expression: left.expression.multiply(right.expression)) { left.value($0) * right.value($0) }
            }
        }
    }

    static func condition(_ generator: inout SplitMix64, depth: Int) -> Condition {
        switch Int.random(in: 0..<(depth < 3 ? 9 : 6), using: &generator) {
        case 0, 1:
            let (left, right) = (number(&generator, depth: 0), number(&generator, depth: 0))
            let comparisons: [(String, (any ExpressionProtocol) -> any ExpressionProtocol, (Int, Int) -> Bool)] = [
                ("=", left.expression.equalTo, (==)), ("!=", left.expression.notEqualTo, (!=)),
                ("<", left.expression.lessThan, (<)), ("<=", left.expression.lessThanOrEqualTo, (<=)),
                (">", left.expression.greaterThan, (>)), (">=", left.expression.greaterThanOrEqualTo, (>=)),
            ]
            let (_, make, test) = comparisons.randomElement(using: &generator)!
            return Condition(expression: make(right.expression)) { test(left.value($0), right.value($0)) }
        case 2:
            let subject = number(&generator, depth: 1)
            let (low, high) = (Int.random(in: -3...6, using: &generator), Int.random(in: 0...12, using: &generator))
            return Condition(expression: subject.expression.between(Expression.int(low), and: Expression.int(high))) {
                low <= subject.value($0) && subject.value($0) <= high
            }
        case 3:
            let values = (0..<Int.random(in: 1...3, using: &generator)).map { _ in Int.random(in: 0...9, using: &generator) }
            return Condition(expression: Expression.property("priority").in(values.map { Expression.int($0) })) {
                values.contains($0["priority"] as! Int)
            }
        case 4:
            let flag = Bool.random(using: &generator)
            return Condition(expression: Expression.property("complete").equalTo(Expression.boolean(flag))) {
                $0["complete"] as! Bool == flag
            }
        case 5:
            let word = ["Task 1", "Task 2", "Task 3", "B"].randomElement(using: &generator)!
            return Bool.random(using: &generator)
                ? Condition(expression: Expression.property("task").lessThan(Expression.string(word))) {
                    ($0["task"] as! String).utf8.lexicographicallyPrecedes(word.utf8)
                }
                : Condition(expression: Expression.property("task").like(Expression.string(word + "%"))) {
                    ($0["task"] as! String).hasPrefix(word)
                }
        case 6:
            let inner = condition(&generator, depth: depth + 1)
            return Condition(expression: Expression.not(inner.expression)) { !inner.holds($0) }
        case 7:
            let (left, right) = (condition(&generator, depth: depth + 1), condition(&generator, depth: depth + 1))
            return Condition(expression: left.expression.and(right.expression)) { left.holds($0) && right.holds($0) }
        default:
            let (left, right) = (condition(&generator, depth: depth + 1), condition(&generator, depth: depth + 1))
            return Condition(expression: left.expression.or(right.expression)) { left.holds($0) || right.holds($0) }
        }
    }

    @Test func builtConditionsSelectWhatSwiftSelects() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let collection = try db.defaultCollection()
        var documents: [String: [String: Any]] = [:]
        for index in 0..<40 {
            let properties: [String: Any] = [
                "task": "Task \(index % 7)", "priority": index % 10, "complete": index % 3 == 0, "n": index - 10,
            ]
            documents["d\(index)"] = properties
            _ = try collection.putProperties(properties, documentID: "d\(index)")
        }
        try collection.createIndex(withName: "byPriority", config: ValueIndexConfiguration(["priority"]))
        var generator = SplitMix64(state: 0xB0113D)
        for _ in 0..<300 {
            let condition = Self.condition(&generator, depth: 0)
            let query = QueryBuilder.select(SelectResult.expression(Meta.id), SelectResult.property("priority"))
                .from(DataSource.collection(collection))
                .where(condition.expression)
            let expected = Set(documents.filter { condition.holds($0.value) }.keys)
            let built = try query.execute().map { $0.string(forKey: "id") ?? "?" }
            #expect(Set(built) == expected, "\(query)")
            #expect(built.count == expected.count)
            let text = try db.createQuery(query.description).execute().map { $0.string(forKey: "id") ?? "?" }
            #expect(Set(text) == expected, "\(query)")
        }
    }

    /// Properties found in the bodies by the path scanner (plain queries) equal what SQLite's JSON functions read
    /// (DISTINCT queries use `->`), for random documents and paths.
    @Test func scannedPropertiesEqualSQLitesReading() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let collection = try db.defaultCollection()
        let names = ["a", "b", "é", "x y"]
        var generator = SplitMix64(state: 0x5CA9)
        for index in 0..<150 {
            let document = RandomJSON.object(&generator, depth: 0, names: names)
            _ = try collection.putProperties(document.foundationObject as! [String: Any], documentID: "d\(index)")
        }
        for _ in 0..<120 {
            var path = ""
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                if path.isEmpty || Bool.random(using: &generator) {
                    path += (path.isEmpty ? "" : ".") + names.randomElement(using: &generator)!
                } else {
                    path += "[\(Int.random(in: -2...2, using: &generator))]"
                }
            }
            func read(_ distinct: Bool) throws -> [String] {
                let columns: [any SelectResultProtocol] = [SelectResult.expression(Meta.id), SelectResult.property(path).as("v")]
                let select = distinct ? QueryBuilder.selectDistinct(columns) : QueryBuilder.select(columns)
                return try select.from(DataSource.collection(collection)).orderBy(Ordering.expression(Meta.id)).execute()
                    .map { $0.toJSON() }
            }
            #expect(try read(false) == read(true), "\(path)")
        }
    }
}
