//! The GPUs of a campaign as a pool: one thread per device, each measuring one trial at a
//! time, and trials handed to whichever device is free (the lowest free slot first, so a batch
//! of k trials on k devices runs on all of them at once). The pipeline records each trial
//! with the device of the slot it was handed to; the tests run this pool on fake devices.

use std::sync::mpsc;
use std::thread::Scope;

use anyhow::{anyhow, Context, Result};

/// A finished job: (job index, slot that ran it, its output).
pub type Finished<O> = (usize, usize, O);

pub struct DevicePool<J, O> {
    senders: Vec<mpsc::Sender<(usize, J)>>,
    done: mpsc::Receiver<Finished<O>>,
    /// Free slots, the lowest last (taken first).
    free: Vec<usize>,
    names: Vec<String>,
}

impl<J: Send, O: Send> DevicePool<J, O> {
    /// Starts one thread per device in `scope`; `run` measures a job on a device.
    pub fn start<'scope, 'env, D, F>(
        scope: &'scope Scope<'scope, 'env>,
        devices: &'scope mut [D],
        names: Vec<String>,
        run: &'scope F,
    ) -> DevicePool<J, O>
    where
        D: Send,
        J: 'scope,
        O: 'scope,
        F: Fn(&mut D, J) -> O + Sync,
    {
        let (done_tx, done) = mpsc::channel::<Finished<O>>();
        let mut senders = Vec::with_capacity(devices.len());
        for (slot, device) in devices.iter_mut().enumerate() {
            let (tx, rx) = mpsc::channel::<(usize, J)>();
            senders.push(tx);
            let done_tx = done_tx.clone();
            scope.spawn(move || {
                for (k, job) in rx {
                    if done_tx.send((k, slot, run(device, job))).is_err() {
                        break;
                    }
                }
            });
        }
        DevicePool {
            free: (0..senders.len()).rev().collect(),
            senders,
            done,
            names,
        }
    }

    /// A free slot; where every device is busy, waits for one to finish and returns its
    /// job too, for the caller to record.
    pub fn free_slot(&mut self) -> Result<(usize, Option<Finished<O>>)> {
        if let Some(slot) = self.free.pop() {
            return Ok((slot, None));
        }
        let finished = self
            .done
            .recv()
            .context("every device thread ended before its trial")?;
        Ok((finished.1, Some(finished)))
    }

    /// Hands job `k` to `slot` (one [`DevicePool::free_slot`] returned).
    pub fn send(&mut self, slot: usize, k: usize, job: J) -> Result<()> {
        let name = self.names.get(slot).map_or("?", String::as_str);
        self.senders
            .get(slot)
            .ok_or_else(|| anyhow!("no device in slot {slot}"))?
            .send((k, job))
            .map_err(|_| anyhow!("the worker thread of {name} ended"))
    }

    /// The device of a slot, as trials record it.
    pub fn name(&self, slot: usize) -> &str {
        self.names.get(slot).map_or("?", String::as_str)
    }

    /// Ends the feeding and returns what is still running, as it finishes.
    pub fn drain(self) -> impl Iterator<Item = Finished<O>> {
        drop(self.senders);
        self.done.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    /// A device that takes `ms` per trial and logs (trial, start, end).
    struct Fake {
        ms: u64,
        log: Vec<(usize, Instant, Instant)>,
    }

    /// Runs `trials` through the pool as the pipeline does; returns each trial's recorded
    /// slot and the devices' logs.
    fn campaign(speeds: &[u64], trials: usize) -> (Vec<usize>, Vec<Fake>) {
        let mut devices: Vec<Fake> = speeds
            .iter()
            .map(|&ms| Fake {
                ms,
                log: Vec::new(),
            })
            .collect();
        let names = (0..speeds.len()).map(|i| format!("GPU {i}")).collect();
        let run = |d: &mut Fake, k: usize| {
            let start = Instant::now();
            std::thread::sleep(Duration::from_millis(d.ms));
            d.log.push((k, start, Instant::now()));
            k
        };
        let mut recorded = vec![usize::MAX; trials];
        std::thread::scope(|scope| {
            let mut pool = DevicePool::start(scope, &mut devices, names, &run);
            for (k, record) in recorded.iter_mut().enumerate() {
                let (slot, finished) = pool.free_slot().unwrap();
                if let Some((j, _, out)) = finished {
                    assert_eq!(out, j);
                }
                *record = slot;
                pool.send(slot, k, k).unwrap();
            }
            for (j, slot, out) in pool.drain() {
                assert_eq!((out, recorded[j]), (j, slot));
            }
        });
        (recorded, devices)
    }

    #[test]
    fn trials_spread_over_every_device_one_at_a_time_each() {
        let (recorded, devices) = campaign(&[20, 20], 8);
        for (slot, device) in devices.iter().enumerate() {
            // Each trial ran on the device the pipeline recorded for it.
            for (k, _, _) in &device.log {
                assert_eq!(recorded[*k], slot, "trial {k}");
            }
            assert_eq!(device.log.len(), 4, "GPU {slot} ran {:?}", device.log);
            // One trial at a time on a device.
            for pair in device.log.windows(2) {
                assert!(pair[1].1 >= pair[0].2, "GPU {slot} overlapped trials");
            }
        }
        // Both devices were busy at once: the first trial of each started before the other's
        // first ended.
        let (a, b) = (&devices[0].log[0], &devices[1].log[0]);
        assert!(
            a.1 < b.2 && b.1 < a.2,
            "the devices ran one after the other"
        );
        assert_eq!(
            &recorded[..2],
            &[0, 1],
            "the first trials go to slots 0 and 1"
        );
    }

    #[test]
    fn a_faster_device_takes_more_trials() {
        let (_, devices) = campaign(&[5, 40], 12);
        let (fast, slow) = (devices[0].log.len(), devices[1].log.len());
        assert_eq!(fast + slow, 12);
        assert!(fast > slow, "fast {fast}, slow {slow}");
    }

    #[test]
    fn one_device_runs_every_trial_in_order() {
        let (recorded, devices) = campaign(&[1], 5);
        assert_eq!(recorded, vec![0; 5]);
        let order: Vec<usize> = devices[0].log.iter().map(|l| l.0).collect();
        assert_eq!(order, vec![0, 1, 2, 3, 4]);
    }
}
