//! Stable sorts through one shared routine. The standard library's sort is compiled again for every element type
//! and every comparison closure (about 4 KiB of wasm each), and the Worker sorts in a few dozen places, none of them
//! hot: here the sorting itself is compiled once, over positions with the comparison behind a `dyn`, and each
//! call adds only its comparison and the few lines that move the elements into place. The order is exactly the
//! standard library's stable sort's (`tests` below check it against `slice::sort_by`); for the unstable sorts
//! this replaces, the elements compared equal are equal (strings, numbers), so no order among them can show.

use std::cmp::Ordering;

/// [`slice::sort_by`]: stable.
pub fn sort_by<T>(items: &mut [T], mut compare: impl FnMut(&T, &T) -> Ordering) {
    let mut order: Vec<usize> = (0..items.len()).collect();
    {
        let items = &*items;
        sort_positions(&mut order, &mut |a, b| match (items.get(a), items.get(b)) {
            (Some(a), Some(b)) => compare(a, b),
            _ => Ordering::Equal,
        });
    }
    permute(items, order);
}

/// [`slice::sort_by_key`]: stable, the key computed for each comparison.
pub fn sort_by_key<T, K: Ord>(items: &mut [T], mut key: impl FnMut(&T) -> K) {
    sort_by(items, |a, b| key(a).cmp(&key(b)));
}

/// [`slice::sort_by_cached_key`]: each key computed once; stable, as the standard one's order is (it breaks ties
/// between equal keys by position).
pub fn sort_by_cached_key<T, K: Ord>(items: &mut [T], key: impl FnMut(&T) -> K) {
    let keys: Vec<K> = items.iter().map(key).collect();
    let mut order: Vec<usize> = (0..items.len()).collect();
    sort_positions(&mut order, &mut |a, b| match (keys.get(a), keys.get(b)) {
        (Some(a), Some(b)) => a.cmp(b),
        _ => Ordering::Equal,
    });
    permute(items, order);
}

/// [`slice::sort`], and `sort_unstable` over elements that are equal whenever they compare equal.
pub fn sort<T: Ord>(items: &mut [T]) {
    sort_by(items, T::cmp);
}

/// The one instance of the standard library's stable sort: over positions, comparing through `compare`.
fn sort_positions(order: &mut [usize], compare: &mut dyn FnMut(usize, usize) -> Ordering) {
    order.sort_by(|&a, &b| compare(a, b));
}

/// Moves `items[order[i]]` to position `i` for every `i`, following each cycle of the permutation once.
fn permute<T>(items: &mut [T], mut order: Vec<usize>) {
    const DONE: usize = usize::MAX;
    for start in 0..order.len() {
        let mut current = start;
        while let Some(slot) = order.get_mut(current) {
            let next = std::mem::replace(slot, DONE);
            if next == start || next == DONE {
                break;
            }
            items.swap(current, next);
            current = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{sort, sort_by, sort_by_cached_key, sort_by_key};

    /// A small deterministic generator, so the cases are the same on every run.
    fn numbers(seed: u64, count: usize, range: u64) -> Vec<u64> {
        let mut state = seed;
        (0..count)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (state >> 33) % range
            })
            .collect()
    }

    #[test]
    fn orders_as_the_standard_stable_sort() {
        for (seed, count, range) in
            [(1, 0, 1), (2, 1, 1), (3, 2, 2), (4, 17, 3), (5, 100, 10), (6, 1000, 50), (7, 5000, 4000)]
        {
            // Pairs of (key, original position): equal keys must keep their order.
            let pairs: Vec<(u64, usize)> = numbers(seed, count, range).into_iter().zip(0..).collect();
            let mut ours = pairs.clone();
            let mut std = pairs.clone();
            // Ties are the values equal under the comparison: the same key.
            let compare = |a: &(u64, usize), b: &(u64, usize)| (a.0 % 7).cmp(&(b.0 % 7)).then(b.0.cmp(&a.0));
            sort_by(&mut ours, compare);
            std.sort_by(compare);
            assert_eq!(ours, std, "sort_by, seed {seed}");
            let mut ours = pairs.clone();
            sort_by_key(&mut ours, |p| std::cmp::Reverse(p.0));
            let mut std = pairs.clone();
            std.sort_by_key(|p| std::cmp::Reverse(p.0));
            assert_eq!(ours, std, "sort_by_key, seed {seed}");
            let mut ours = pairs.clone();
            sort_by_cached_key(&mut ours, |p| p.0 / 3);
            let mut std = pairs.clone();
            std.sort_by_cached_key(|p| p.0 / 3);
            assert_eq!(ours, std, "sort_by_cached_key, seed {seed}");
        }
    }

    #[test]
    fn sorts_owned_values() {
        let mut words: Vec<String> = ["pear", "apple", "fig", "apple", ""].map(String::from).to_vec();
        sort(&mut words);
        assert_eq!(words, ["", "apple", "apple", "fig", "pear"]);
    }
}
