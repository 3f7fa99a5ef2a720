/// Quantified conditions over arrays in ``QueryBuilder`` queries (`ANY`, `EVERY`, `ANY AND EVERY`).
///
/// ```swift
/// let tag = ArrayExpression.variable("tag")
/// ArrayExpression.any(tag).in(Expression.property("tags")).satisfies(tag.equalTo(Expression.string("dairy")))
/// ```
public enum ArrayExpression {
    /// True when some element satisfies the condition.
    public static func any(_ variable: any VariableExpressionProtocol) -> ArrayExpressionIn {
        ArrayExpressionIn(quantifier: .any, variable: variable)
    }

    /// True when every element satisfies the condition (and for an empty or missing array).
    public static func every(_ variable: any VariableExpressionProtocol) -> ArrayExpressionIn {
        ArrayExpressionIn(quantifier: .every, variable: variable)
    }

    /// True when the array is not empty and every element satisfies the condition.
    public static func anyAndEvery(_ variable: any VariableExpressionProtocol) -> ArrayExpressionIn {
        ArrayExpressionIn(quantifier: .anyAndEvery, variable: variable)
    }

    /// The variable standing for each element; `"v.name"` is a property of it.
    public static func variable(_ name: String) -> any VariableExpressionProtocol {
        BuiltExpression(.path(Expression.propertyPath(name)))
    }
}

/// `ANY v` waiting for the array it ranges over.
public struct ArrayExpressionIn: Sendable {
    let quantifier: QueryExpression.Quantifier
    let variable: any VariableExpressionProtocol

    /// The array the variable ranges over.
    public func `in`(_ expression: any ExpressionProtocol) -> ArrayExpressionSatisfies {
        ArrayExpressionSatisfies(quantifier: quantifier, variable: variable, list: expression)
    }
}

/// `ANY v IN list` waiting for its condition.
public struct ArrayExpressionSatisfies: Sendable {
    let quantifier: QueryExpression.Quantifier
    let variable: any VariableExpressionProtocol
    let list: any ExpressionProtocol

    /// The condition on each element.
    public func satisfies(_ condition: any ExpressionProtocol) -> any ExpressionProtocol {
        guard case .path(let steps) = variable.node, steps.count == 1, case .key(let name) = steps[0] else {
            return BuiltExpression(.invalid("An array expression's variable is a plain name, not \(variable.node.text)"))
        }
        return BuiltExpression(.quantified(quantifier, variable: name, list: list.node, condition: condition.node))
    }
}
