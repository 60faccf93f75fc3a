/// Secrets (the DJ's page token, a private station's media proof, a join code) are compared in
/// time that does not depend on where the first difference lies, so timing tells a guesser
/// nothing about how much of a guess was right.
public enum ConstantTime {
    /// True when `a` and `b` hold the same bytes; only their lengths show in the time taken.
    public static func equal(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
