//! An array tour with the position of every city, and the local search of the focused
//! variant: 2-opt and Or-opt on neighbour lists, driven by a queue of active cities (the
//! don't-look bits are "not in the queue"), started from the cities whose edges changed.
//!
//! Both move types are applied as 2-opt reversals of the shorter side ([`Tour::move2`]), so
//! one primitive keeps `order` and `pos` consistent; an Or-opt move is two or three of them.

use super::super::instance::Instance;

/// A closed tour as an array of cities and the position of every city.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tour {
    pub order: Vec<u32>,
    pub pos: Vec<u32>,
}

/// An improving move found by the local search, with its exact length change (negative).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move {
    /// Replace the edges (a, b) and (c, d) by (a, c) and (b, d); (a, b) and (c, d) are
    /// oriented alike along the tour (b follows a as d follows c, in one direction).
    TwoOpt {
        a: u32,
        b: u32,
        c: u32,
        d: u32,
        delta: i64,
    },
    /// Move the segment s1 ..= s2 (s1 next to p, s2 next to nx) between c and d, where c is
    /// met before d walking from nx away from the segment; `reversed`: c joins s2 and s1
    /// joins d, else c joins s1 and s2 joins d.
    OrOpt {
        p: u32,
        s1: u32,
        s2: u32,
        nx: u32,
        c: u32,
        d: u32,
        reversed: bool,
        delta: i64,
    },
}

impl Move {
    pub fn delta(&self) -> i64 {
        match *self {
            Move::TwoOpt { delta, .. } | Move::OrOpt { delta, .. } => delta,
        }
    }
}

impl Tour {
    /// A tour from a permutation of 0..n (not checked beyond debug builds).
    pub fn new(order: Vec<u32>) -> Self {
        let mut pos = vec![0u32; order.len()];
        for (i, &c) in order.iter().enumerate() {
            pos[c as usize] = i as u32;
        }
        Tour { order, pos }
    }

    /// Replaces the tour by `order` without reallocating.
    pub fn assign(&mut self, order: &[u32]) {
        self.order.clear();
        self.order.extend_from_slice(order);
        self.pos.resize(order.len(), 0);
        for (i, &c) in order.iter().enumerate() {
            self.pos[c as usize] = i as u32;
        }
    }

    #[inline]
    pub fn n(&self) -> usize {
        self.order.len()
    }

    #[inline]
    pub fn succ(&self, c: u32) -> u32 {
        let i = self.pos[c as usize] as usize + 1;
        self.order[if i == self.n() { 0 } else { i }]
    }

    #[inline]
    pub fn pred(&self, c: u32) -> u32 {
        let i = self.pos[c as usize] as usize;
        self.order[if i == 0 { self.n() - 1 } else { i - 1 }]
    }

    /// True when a and b are neighbours on the tour.
    #[inline]
    pub fn adjacent(&self, a: u32, b: u32) -> bool {
        self.succ(a) == b || self.pred(a) == b
    }

    /// Reverses the path from `from` to `to` (walking forward, both included), or its
    /// complement when that is shorter: the same cycle either way, up to orientation.
    pub fn reverse(&mut self, from: u32, to: u32) {
        let n = self.n();
        let (i, j) = (
            self.pos[from as usize] as usize,
            self.pos[to as usize] as usize,
        );
        let inner = (j + n - i) % n + 1;
        let (start, len) = if 2 * inner <= n {
            (i, inner)
        } else {
            ((j + 1) % n, n - inner)
        };
        for s in 0..len / 2 {
            let p = (start + s) % n;
            let q = (start + len - 1 - s) % n;
            self.order.swap(p, q);
            self.pos[self.order[p] as usize] = p as u32;
            self.pos[self.order[q] as usize] = q as u32;
        }
    }

    /// Replaces the tour edges (a, b) and (c, d) by (a, c) and (b, d); the two edges must be
    /// oriented alike (if b = succ a then d = succ c, if b = pred a then d = pred c).
    pub fn move2(&mut self, a: u32, b: u32, c: u32, d: u32) {
        debug_assert!(self.adjacent(a, b) && self.adjacent(c, d));
        if self.succ(a) == b {
            self.reverse(b, c);
        } else {
            self.reverse(c, b);
        }
        debug_assert!(self.adjacent(a, c) && self.adjacent(b, d));
    }

    /// Applies a move found on this tour.
    pub fn apply(&mut self, m: &Move) {
        match *m {
            Move::TwoOpt { a, b, c, d, .. } => self.move2(a, b, c, d),
            Move::OrOpt {
                p,
                s1,
                s2,
                nx,
                c,
                d,
                reversed,
                ..
            } => {
                // p [s1..s2] [nx..c] d  ->  p [c..nx] [s2..s1] d  ->  p [nx..c] [s2..s1] d
                self.move2(p, s1, c, d);
                self.move2(p, c, nx, s2);
                if !reversed && s1 != s2 {
                    // ... -> p [nx..c] [s1..s2] d
                    self.move2(c, s2, s1, d);
                }
            }
        }
    }

    /// The exact length.
    pub fn length(&self, inst: &Instance) -> i64 {
        let mut total = 0;
        let mut prev = *self.order.last().expect("a tour has cities") as usize;
        for &c in &self.order {
            total += inst.dist(prev, c as usize);
            prev = c as usize;
        }
        total
    }
}

/// Neighbour lists for the local search: the first `width` entries of each candidate row.
pub struct Neighbours<'a> {
    pub lists: &'a [u32],
    /// Row length of `lists`.
    pub k: usize,
    /// Entries the search reads per row (<= k).
    pub width: usize,
}

impl Neighbours<'_> {
    #[inline]
    fn of(&self, c: u32) -> &[u32] {
        let row = c as usize * self.k;
        &self.lists[row..row + self.width]
    }
}

/// The best improving 2-opt move that gives `a` a new neighbour from its list.
pub fn best_two_opt(t: &Tour, inst: &Instance, nb: &Neighbours, a: u32) -> Option<Move> {
    let d = |x: u32, y: u32| inst.dist(x as usize, y as usize);
    let mut best: Option<Move> = None;
    for forward in [true, false] {
        let b = if forward { t.succ(a) } else { t.pred(a) };
        let dab = d(a, b);
        for &c in nb.of(a) {
            let dac = d(a, c);
            // Lists are sorted by distance: no later c can make (a, c) shorter than (a, b).
            if dac >= dab {
                break;
            }
            let dd = if forward { t.succ(c) } else { t.pred(c) };
            if c == b || dd == a {
                continue;
            }
            let delta = dac + d(b, dd) - dab - d(c, dd);
            if delta < best.map_or(0, |m| m.delta()) {
                best = Some(if forward {
                    Move::TwoOpt {
                        a,
                        b,
                        c,
                        d: dd,
                        delta,
                    }
                } else {
                    // Edges b -> a and dd -> c, oriented alike: (b, dd) and (a, c) appear.
                    Move::TwoOpt {
                        a: b,
                        b: a,
                        c: dd,
                        d: c,
                        delta,
                    }
                });
            }
        }
    }
    best
}

/// The best improving Or-opt move of a segment of 1 to 3 cities that starts at `a` (in either
/// direction), reinserted (either way round) next to a list neighbour of one of its ends.
pub fn best_or_opt(t: &Tour, inst: &Instance, nb: &Neighbours, a: u32) -> Option<Move> {
    let n = t.n();
    let d = |x: u32, y: u32| inst.dist(x as usize, y as usize);
    let mut best: Option<Move> = None;
    for forward in [true, false] {
        // `next` walks away from p through the segment; `back` the other way.
        let next = |c: u32| if forward { t.succ(c) } else { t.pred(c) };
        let back = |c: u32| if forward { t.pred(c) } else { t.succ(c) };
        let s1 = a;
        let p = back(s1);
        let mut s2 = s1;
        for len in 1..=3usize {
            if len > 1 {
                s2 = next(s2);
            }
            // The segment, p and nx, plus an edge elsewhere: at least len + 4 cities.
            if n < len + 5 {
                break;
            }
            let nx = next(s2);
            let in_segment = |c: u32| {
                let mut x = s1;
                for _ in 0..len {
                    if x == c {
                        return true;
                    }
                    x = next(x);
                }
                false
            };
            let removed = d(p, s1) + d(s2, nx) - d(p, nx);
            if removed <= 0 {
                continue;
            }
            for (end, other) in [(s1, s2), (s2, s1)] {
                for &g in nb.of(end) {
                    let dg = d(end, g);
                    if dg >= removed {
                        break;
                    }
                    if in_segment(g) || g == p || g == nx {
                        continue;
                    }
                    for h in [t.succ(g), t.pred(g)] {
                        if in_segment(h) || h == p || h == nx {
                            continue;
                        }
                        let delta = dg + d(other, h) - d(g, h) - removed;
                        if delta >= best.map_or(0, |m| m.delta()) {
                            continue;
                        }
                        // c is met before d walking from nx away from the segment.
                        let (c, dd) = if next(g) == h { (g, h) } else { (h, g) };
                        // c joins s1 and s2 joins d: not reversed.
                        // (For one city, s1 = s2, both tests agree: never reversed.)
                        let reversed = !((end == s1 && g == c) || (end == s2 && g == dd));
                        best = Some(Move::OrOpt {
                            p,
                            s1,
                            s2,
                            nx,
                            c,
                            d: dd,
                            reversed,
                            delta,
                        });
                    }
                }
            }
        }
    }
    best
}

/// Work counters of one local search.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LsStats {
    pub two_opt: u64,
    pub or_opt: u64,
}

/// A queue of active cities with membership flags; the flags are all clear whenever the
/// queue is empty, so a search needs no O(n) reset.
pub struct ActiveQueue {
    queue: std::collections::VecDeque<u32>,
    queued: Vec<bool>,
}

impl ActiveQueue {
    pub fn new(n: usize) -> Self {
        ActiveQueue {
            queue: std::collections::VecDeque::new(),
            queued: vec![false; n],
        }
    }

    #[inline]
    pub fn push(&mut self, c: u32) {
        if !self.queued[c as usize] {
            self.queued[c as usize] = true;
            self.queue.push_back(c);
        }
    }

    /// Pushes `c` unless queued; true when it was not.
    #[inline]
    pub fn push_new(&mut self, c: u32) -> bool {
        let fresh = !self.queued[c as usize];
        self.push(c);
        fresh
    }

    fn pop(&mut self) -> Option<u32> {
        let c = self.queue.pop_front()?;
        self.queued[c as usize] = false;
        Some(c)
    }

    pub fn clear(&mut self) {
        while self.pop().is_some() {}
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}

/// 2-opt, then (with `or_opt`) Or-opt, from every city in the queue until the queue is empty
/// or `stop` says so (checked every 256 cities); the total length change (<= 0).
pub fn local_search(
    t: &mut Tour,
    inst: &Instance,
    nb: &Neighbours,
    or_opt: bool,
    queue: &mut ActiveQueue,
    stats: &mut LsStats,
    stop: &dyn Fn() -> bool,
) -> i64 {
    let mut total = 0;
    let mut popped = 0u64;
    while let Some(a) = queue.pop() {
        popped += 1;
        if popped % 256 == 0 && stop() {
            queue.clear();
            break;
        }
        let found = match best_two_opt(t, inst, nb, a) {
            Some(m) => Some(m),
            None if or_opt => best_or_opt(t, inst, nb, a),
            None => None,
        };
        let Some(m) = found else { continue };
        match m {
            Move::TwoOpt { a, b, c, d, .. } => {
                stats.two_opt += 1;
                for x in [a, b, c, d] {
                    queue.push(x);
                }
            }
            Move::OrOpt {
                p,
                s1,
                s2,
                nx,
                c,
                d,
                ..
            } => {
                stats.or_opt += 1;
                for x in [p, s1, s2, nx, c, d] {
                    queue.push(x);
                }
            }
        }
        t.apply(&m);
        total += m.delta();
    }
    total
}

/// [`local_search`] from every city, repeated until a sweep makes no move: a true local
/// optimum over the lists (one sweep is not enough: a move can open an improving move at a
/// city whose edges it did not touch, which the queue never revisits). Used for the first
/// tour; the ants' searches stay focused on their changed edges.
pub fn local_optimum(
    t: &mut Tour,
    inst: &Instance,
    nb: &Neighbours,
    or_opt: bool,
    queue: &mut ActiveQueue,
    stats: &mut LsStats,
    stop: &dyn Fn() -> bool,
) -> i64 {
    let mut total = 0;
    loop {
        for i in 0..t.n() {
            queue.push(t.order[i]);
        }
        let delta = local_search(t, inst, nb, or_opt, queue, stats, stop);
        total += delta;
        if delta == 0 || stop() {
            return total;
        }
    }
}
