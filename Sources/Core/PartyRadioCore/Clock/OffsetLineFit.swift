/// Robust straight-line fit of offset over local time for `ClockSync`: Theil–Sen to find outliers,
/// weighted least squares on the inliers. Works in doubles relative to the samples' centre, so
/// epoch-sized nanosecond values keep their precision.
struct OffsetLineFit {
    let estimate: ClockEstimate

    init(
        samples: [TimeSample], weightFloorNs: Double, minDriftSpanNs: Int64, maxDriftPPM: Double,
        fallbackDriftPPM: Double
    ) {
        precondition(!samples.isEmpty)
        let minDelay = samples.map(\.delayNs).min()!
        // Reference instant and offset base: the first sample, then re-centred on the weighted mean.
        let baseTime = samples[0].midpointNs
        let baseOffset = samples[0].offsetNs
        var points = samples.map { sample -> Point in
            let excess = Double(sample.delayNs - minDelay)
            return Point(
                x: Double(sample.midpointNs &- baseTime) / 1e9,
                y: Double(sample.offsetNs &- baseOffset),
                w: 1 / (weightFloorNs * weightFloorNs + excess * excess))
        }
        let xs = points.map(\.x)
        let spanNs = (xs.max()! - xs.min()!) * 1e9
        let maxSlope = maxDriftPPM * 1_000  // ns of offset per second of local time

        var slope: Double
        if spanNs >= Double(minDriftSpanNs) && points.count >= 4 {
            slope = Self.theilSenSlope(points, minSeparation: spanNs / 4e9)
            slope = min(maxSlope, max(-maxSlope, slope))
            let intercept = Self.weightedMedian(points.map { ($0.y - slope * $0.x, $0.w) })
            // Outliers: residuals beyond 3 robust sigmas (and beyond 30 µs, the LAN noise floor).
            let residuals = points.map { $0.y - (intercept + slope * $0.x) }
            let mad = Self.median(residuals.map(\.magnitude)) * 1.4826
            let limit = max(3 * mad, 30_000)
            let inliers = zip(points, residuals).filter { $0.1.magnitude <= limit }.map(\.0)
            if inliers.count >= 3, let line = Self.weightedLeastSquares(inliers) {
                points = inliers
                slope = min(maxSlope, max(-maxSlope, line.slope))
            }
        } else {
            slope = fallbackDriftPPM * 1_000
        }
        // Re-centre on the weighted mean time, where the intercept is best determined.
        let totalWeight = points.reduce(0) { $0 + $1.w }
        let centreX = points.reduce(0) { $0 + $1.w * $1.x } / totalWeight
        let centreY = Self.weightedMedianOrMean(points, slope: slope, centreX: centreX)
        let residuals = points.map { $0.y - (centreY + slope * ($0.x - centreX)) }
        let rms = (residuals.reduce(0) { $0 + $1 * $1 } / Double(residuals.count)).squareRoot()

        estimate = ClockEstimate(
            referenceLocalNs: baseTime &+ Int64((centreX * 1e9).rounded()),
            offsetNs: baseOffset &+ Int64(centreY.rounded()),
            driftPPM: slope / 1_000,
            uncertaintyNs: Int64(rms.rounded()),
            samplesUsed: points.count)
    }

    struct Point {
        var x: Double  // seconds since the base sample
        var y: Double  // ns of offset above the base sample's
        var w: Double
    }

    /// With few points the weighted median resists a stray sample; with many, the weighted mean
    /// (the least-squares intercept) is more precise.
    private static func weightedMedianOrMean(_ points: [Point], slope: Double, centreX: Double) -> Double {
        let detrended = points.map { ($0.y - slope * ($0.x - centreX), $0.w) }
        if points.count < 5 { return weightedMedian(detrended) }
        let total = detrended.reduce(0) { $0 + $1.1 }
        return detrended.reduce(0) { $0 + $1.0 * $1.1 } / total
    }

    /// Median of the slopes between pairs at least `minSeparation` seconds apart.
    static func theilSenSlope(_ points: [Point], minSeparation: Double) -> Double {
        var slopes: [Double] = []
        slopes.reserveCapacity(points.count * (points.count - 1) / 2)
        for i in points.indices {
            for j in points.indices where j > i {
                let dx = points[j].x - points[i].x
                if dx.magnitude >= minSeparation && dx != 0 { slopes.append((points[j].y - points[i].y) / dx) }
            }
        }
        return slopes.isEmpty ? 0 : median(slopes)
    }

    static func weightedLeastSquares(_ points: [Point]) -> (slope: Double, intercept: Double)? {
        var sw = 0.0
        var sx = 0.0
        var sy = 0.0
        for p in points {
            sw += p.w
            sx += p.w * p.x
            sy += p.w * p.y
        }
        let mx = sx / sw
        let my = sy / sw
        var sxx = 0.0
        var sxy = 0.0
        for p in points {
            sxx += p.w * (p.x - mx) * (p.x - mx)
            sxy += p.w * (p.x - mx) * (p.y - my)
        }
        guard sxx > 0 else { return nil }
        let slope = sxy / sxx
        return (slope, my - slope * mx)
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }

    static func weightedMedian(_ values: [(value: Double, weight: Double)]) -> Double {
        let sorted = values.sorted { $0.value < $1.value }
        let half = sorted.reduce(0) { $0 + $1.weight } / 2
        var running = 0.0
        for entry in sorted {
            running += entry.weight
            if running >= half { return entry.value }
        }
        return sorted[sorted.count - 1].value
    }
}
