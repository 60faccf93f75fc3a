extension StringProtocol {
    /// The text without leading and trailing white space, newlines included: the scalars with
    /// Unicode's White_Space property, the set Foundation's `.whitespacesAndNewlines` names,
    /// without importing Foundation.
    ///
    /// Trims whole scalars, so a combining mark after a leading space stays.
    @inlinable
    public func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(self[first..<scalars.index(after: last)])
    }
}
