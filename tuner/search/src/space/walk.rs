//! Depth-first enumeration of valid points, one declaration per level, with each constraint
//! checked as soon as every parameter it reads is decided (pruning whole subtrees). Memory is
//! one slot per level, whatever the size of the space.

use evalexpr::DefaultNumericTypes;

use super::expr::Env;
use super::Space;

type EValue = evalexpr::Value<DefaultNumericTypes>;

/// The choice made at one level.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Slot {
    /// Not yet entered.
    Unset,
    /// The declaration does not apply (its `when` fails or an earlier one set the name).
    Skip,
    /// Index into the declaration's domain.
    At(usize),
}

/// A lazy walk over the valid assignments of a subset of the declarations.
pub(crate) struct Walk<'a> {
    space: &'a Space,
    /// Declaration indexes, in file order.
    levels: Vec<usize>,
    /// Constraints to check after each level.
    check_at: Vec<Vec<usize>>,
    /// Per name: a preferred value; where it is in the declaration's domain it is the only
    /// option.
    pins: Vec<Option<EValue>>,
    /// Check constraints (off to count the structural product).
    constrained: bool,
    slots: Vec<Slot>,
    values: Vec<Option<EValue>>,
    started: bool,
    done: bool,
    /// Options tried so far: the walk's cost, which constraints can make exponential.
    work: u64,
    /// Stop once `work` passes this (see [`Walk::count_within`]).
    max_work: u64,
}

impl<'a> Walk<'a> {
    pub fn new(space: &'a Space, levels: Vec<usize>, constrained: bool) -> Walk<'a> {
        let n = space.names.len();
        let mut check_at = vec![Vec::new(); levels.len()];
        if constrained {
            for (c, expr) in space.constraints.iter().enumerate() {
                if expr.params.is_empty() {
                    continue;
                }
                // The last level that declares any name the constraint reads.
                let last = levels
                    .iter()
                    .rposition(|&d| expr.params.contains(&space.decls[d].name));
                if let Some(last) = last {
                    check_at[last].push(c);
                }
            }
        }
        Walk {
            space,
            slots: vec![Slot::Unset; levels.len()],
            levels,
            check_at,
            pins: vec![None; n],
            constrained,
            values: vec![None; n],
            started: false,
            done: false,
            work: 0,
            max_work: u64::MAX,
        }
    }

    /// Every declaration, all constraints.
    pub fn all(space: &'a Space) -> Walk<'a> {
        Walk::new(space, (0..space.decls.len()).collect(), true)
    }

    pub fn with_pins(mut self, pins: Vec<Option<EValue>>) -> Walk<'a> {
        self.pins = pins;
        self
    }

    fn env(&self) -> Env<'_> {
        Env {
            names: &self.space.index,
            values: &self.values,
            constants: &self.space.constants_eval,
        }
    }

    /// Domain indexes of the current assignment, by level (None where skipped).
    pub fn choices(&self) -> impl Iterator<Item = (usize, Option<usize>)> + '_ {
        self.levels.iter().zip(&self.slots).map(|(&d, s)| match s {
            Slot::At(i) => (d, Some(*i)),
            _ => (d, None),
        })
    }

    fn clear(&mut self, level: usize) {
        if let Slot::At(_) = self.slots[level] {
            let name = self.space.decls[self.levels[level]].name;
            self.values[name] = None;
        }
        self.slots[level] = Slot::Unset;
    }

    fn checks_pass(&mut self, level: usize) -> bool {
        // Long expressions cost more to evaluate: each 64 bytes count as one more option.
        self.work += self.check_at[level]
            .iter()
            .map(|&c| (self.space.constraints[c].text.len() / 64) as u64)
            .sum::<u64>();
        let env = self.env();
        self.check_at[level].iter().all(|&c| {
            let expr = &self.space.constraints[c];
            if expr.params.iter().any(|&p| self.values[p].is_none()) {
                return true;
            }
            expr.eval(&env).unwrap_or(false)
        })
    }

    /// Moves `level` to its next option that passes the checks (its first when `Unset`).
    fn advance(&mut self, level: usize) -> bool {
        let decl = &self.space.decls[self.levels[level]];
        let name = decl.name;
        let previous = self.slots[level];
        self.clear(level);
        let applies = match previous {
            Slot::Unset => {
                self.values[name].is_none()
                    && decl.when.as_ref().is_none_or(|w| {
                        !w.params.iter().any(|&p| self.values[p].is_none())
                            && w.eval(&self.env()).unwrap_or(false)
                    })
            }
            Slot::Skip => return false,
            Slot::At(_) => true,
        };
        if !applies {
            self.slots[level] = Slot::Skip;
            if self.checks_pass(level) {
                return true;
            }
            self.slots[level] = Slot::Unset;
            return false;
        }
        let pinned = self.pins[name]
            .as_ref()
            .and_then(|p| decl.edomain.iter().position(|v| v == p));
        let mut next = match (previous, pinned) {
            (Slot::At(_), Some(_)) => return false,
            (Slot::At(i), None) => i + 1,
            (_, Some(p)) => p,
            _ => 0,
        };
        let end = match pinned {
            Some(p) => p + 1,
            None => decl.edomain.len(),
        };
        while next < end {
            self.work += 1;
            self.values[name] = Some(decl.edomain[next].clone());
            self.slots[level] = Slot::At(next);
            if !self.constrained || self.checks_pass(level) {
                return true;
            }
            next += 1;
        }
        self.values[name] = None;
        self.slots[level] = Slot::Unset;
        false
    }

    /// Steps to the next valid assignment; false when there is none left.
    pub fn step(&mut self) -> bool {
        if self.done {
            return false;
        }
        let k = self.levels.len();
        if k == 0 {
            self.done = true;
            let first = !self.started;
            self.started = true;
            return first && self.space.constants_ok;
        }
        if !self.space.constants_ok {
            self.done = true;
            return false;
        }
        let mut level = if self.started { k - 1 } else { 0 };
        self.started = true;
        loop {
            if self.work > self.max_work {
                self.done = true;
                return false;
            }
            if self.advance(level) {
                if level + 1 == k {
                    return true;
                }
                level += 1;
                // A level below holds the choice of the previous branch.
                self.clear(level);
            } else {
                if level == 0 {
                    self.done = true;
                    return false;
                }
                level -= 1;
            }
        }
    }

    /// Counts the remaining assignments, or `None` once more than `max_work` options were
    /// tried: a file can tie parameters whose combinations no walk could finish.
    pub fn count_within(mut self, max_work: u64) -> Option<u64> {
        self.max_work = max_work;
        let mut n = 0u64;
        while self.step() {
            n = n.saturating_add(1);
        }
        (self.work <= max_work).then_some(n)
    }
}
