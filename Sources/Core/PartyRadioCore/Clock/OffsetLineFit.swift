/// Straight-line fit of offset over local time for `ClockSync`: the line that keeps the widest
/// clearance from every sample's error bound. Works in doubles relative to the newest sample, so
/// epoch-sized nanosecond values keep their precision.
///
/// A sample bounds the true offset at its midpoint from above by `t2 − t1` (the offset plus the
/// outbound delay) and from below by `t3 − t4` (the offset minus the return delay), i.e. by
/// `θ̂ ± δ/2`; queueing only ever moves a bound away from the line. For a slope `b`, the band between
/// the lowest upper bound and the highest lower bound (each taken along `b`) is, at the true drift,
/// as wide as the fastest outbound plus the fastest return delay in the window; tilting it away from
/// the true drift narrows it at one end as soon as fast samples lie at both ends. The width is a
/// concave, piecewise linear function of `b` with corners where `b` meets the slope of an edge of
/// the bounds' convex hulls, so its maximum is found exactly; the fit takes the middle of the slopes
/// whose band is within `toleranceNs` of the widest, and puts the line in the middle of that band.
/// Only the fastest samples of each direction pin the line, so a slow packet, however late, changes
/// nothing, and a dense burst of samples weighs no more than a sparse stretch.
struct OffsetLineFit {
    let estimate: ClockEstimate

    /// A drift is fitted only from this many samples on.
    static let minDriftSamples = 4

    init(
        samples: [TimeSample], toleranceNs: Double, minDriftSpanNs: Int64, maxDriftPPM: Double,
        fallbackDriftPPM: Double
    ) {
        precondition(!samples.isEmpty)
        let oldestNs = samples.map(\.midpointNs).min()!
        let newest = samples.max { $0.midpointNs < $1.midpointNs }!
        let baseTime = newest.midpointNs
        let baseOffset = newest.offsetNs
        // Each sample's bounds θ̂ ± δ/2, in ns above the newest sample's offset, at x seconds since its
        // midpoint; the lower bounds negated, so that their upper hull is a lower hull too.
        var upper: [Bound] = []
        var negatedLower: [Bound] = []
        for sample in samples {
            let x = Double(sample.midpointNs &- baseTime) / 1e9
            let y = Double(sample.offsetNs &- baseOffset)
            let half = Double(sample.delayNs) / 2
            upper.append(Bound(x: x, y: y + half))
            negatedLower.append(Bound(x: x, y: half - y))
        }
        // Along any slope, the lowest upper bound is a vertex of the upper bounds' lower convex hull,
        // and the highest lower bound one of the lower bounds' upper hull: only those can pin the line.
        let bounds = Bounds(
            upper: Self.lowerHull(upper), lower: Self.lowerHull(negatedLower).map { Bound(x: $0.x, y: -$0.y) })
        let spanNs = Double(baseTime &- oldestNs)
        let maxSlope = maxDriftPPM * 1_000  // ns of offset per second of local time

        var slope = min(maxSlope, max(-maxSlope, fallbackDriftPPM * 1_000))
        if spanNs >= Double(minDriftSpanNs) && samples.count >= Self.minDriftSamples {
            slope = bounds.widestBandSlope(maxSlope: maxSlope, toleranceNs: toleranceNs)
        }
        let band = bounds.band(slope: slope)
        estimate = ClockEstimate(
            referenceLocalNs: baseTime,
            offsetNs: baseOffset &+ Int64(band.centre.rounded()),
            driftPPM: slope / 1_000,
            uncertaintyNs: Int64((max(0, band.width) / 2).rounded()),
            samplesUsed: samples.count)
    }

    struct Bound {
        var x: Double  // seconds since the newest sample's midpoint
        var y: Double  // ns above the newest sample's offset
    }

    /// The vertices of the lower convex hull of `points` (monotone chain), left to right.
    static func lowerHull(_ points: [Bound]) -> [Bound] {
        let sorted = points.sorted { ($0.x, $0.y) < ($1.x, $1.y) }
        var hull: [Bound] = []
        for point in sorted {
            while hull.count >= 2 {
                let a = hull[hull.count - 2]
                let b = hull[hull.count - 1]
                // Drop b unless a → b → point turns left (b lies below the chord from a to point).
                guard (b.x - a.x) * (point.y - a.y) - (b.y - a.y) * (point.x - a.x) <= 0 else { break }
                hull.removeLast()
            }
            hull.append(point)
        }
        return hull
    }

    struct Bounds {
        var upper: [Bound]
        var lower: [Bound]

        /// The band between the lowest upper bound and the highest lower bound along `slope` (ns per
        /// second): its width (negative when no line of that slope fits every bound) and its centre at
        /// x = 0.
        func band(slope: Double) -> (width: Double, centre: Double) {
            var top = Double.infinity
            var bottom = -Double.infinity
            for bound in upper { top = min(top, bound.y - slope * bound.x) }
            for bound in lower { bottom = max(bottom, bound.y - slope * bound.x) }
            return (top - bottom, (top + bottom) / 2)
        }

        /// The middle of the slopes in ±`maxSlope` whose band is within `toleranceNs` of the widest.
        func widestBandSlope(maxSlope: Double, toleranceNs: Double) -> Double {
            // The width is concave and piecewise linear in the slope, with its corners at the slopes of
            // the hulls' edges: evaluate it there and at the limits, and interpolate between them.
            var slopes = [-maxSlope, maxSlope]
            for hull in [upper, lower] {
                for (a, b) in zip(hull, hull.dropFirst()) where b.x > a.x {
                    let slope = (b.y - a.y) / (b.x - a.x)
                    if slope.magnitude < maxSlope { slopes.append(slope) }
                }
            }
            slopes.sort()
            let widths = slopes.map { band(slope: $0).width }
            let best = widths.indices.max { widths[$0] < widths[$1] }!
            let target = widths[best] - toleranceNs
            func crossing(_ outside: Int, _ inside: Int) -> Double {
                let share = (target - widths[outside]) / (widths[inside] - widths[outside])
                return slopes[outside] + share * (slopes[inside] - slopes[outside])
            }
            var first = best
            while first > 0 && widths[first - 1] >= target { first -= 1 }
            var last = best
            while last < slopes.count - 1 && widths[last + 1] >= target { last += 1 }
            let lowest = first > 0 ? crossing(first - 1, first) : slopes[first]
            let highest = last < slopes.count - 1 ? crossing(last + 1, last) : slopes[last]
            return (lowest + highest) / 2
        }
    }
}
