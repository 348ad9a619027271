//! Paging: `limit` and `offset` in, `nextOffset` out, computed one way for every tool.
//!
//! Each tool keeps its own `limit`/`offset` fields (their bounds, defaults and descriptions differ and are part
//! of the published schemas) and turns them into a [`Paging`]; the next offset always comes from
//! [`Paging::next_offset`], so "is there more?" has one answer everywhere: there is more when the results looked
//! at so far end before the results known to exist.

/// Where a page starts and how long it may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paging {
    pub offset: usize,
    pub limit: usize,
}

impl Paging {
    /// From a tool's `offset` and `limit` arguments.
    pub fn new(offset: u32, limit: u32) -> Self {
        Self { offset: offset as usize, limit: limit as usize }
    }

    /// The first `limit` results, for lists that have no `offset` argument.
    pub fn first(limit: usize) -> Self {
        Self { offset: 0, limit }
    }

    /// The `nextOffset` after `consumed` results were looked at from `offset` on, when `available` results are
    /// known to exist in all (Zotero's `Total-Results`, or at least as many as were fetched). `None` means the
    /// end was reached, or nothing says there is more: an unknown total never invents a next page.
    pub fn next_offset(&self, consumed: usize, available: Option<u64>) -> Option<u64> {
        let end = self.offset.saturating_add(consumed) as u64;
        available.filter(|total| end < *total).map(|_| end)
    }

    /// This page of a list held in memory, and the `nextOffset` after it.
    pub fn slice<'a, T>(&self, all: &'a [T]) -> (&'a [T], Option<u64>) {
        let start = self.offset.min(all.len());
        let end = start.saturating_add(self.limit).min(all.len());
        let page = &all[start..end];
        (page, self.next_offset(page.len(), Some(all.len() as u64)))
    }
}

/// Keeps about `fraction` (between 0 and 1) of `list`, its first entries, for an answer too large to send
/// ([`crate::mcp::Tool::shorten`]). Returns how many entries were dropped; `None` when nothing can be cut (the
/// list is empty or already down to one entry).
pub fn shorten_list<T>(list: &mut Vec<T>, fraction: f64) -> Option<usize> {
    let len = list.len();
    if len <= 1 {
        return None;
    }
    let keep = ((len as f64 * fraction) as usize).clamp(1, len - 1);
    list.truncate(keep);
    Some(len - keep)
}

/// [`shorten_list`] for a list that has no `offset` to continue with: `total` keeps how many entries there were
/// before the first cut (a later pass leaves it as it is), so the answer says how much is not shown.
pub fn shorten_counted<T>(list: &mut Vec<T>, fraction: f64, total: &mut Option<usize>) -> bool {
    let before = list.len();
    if shorten_list(list, fraction).is_none() {
        return false;
    }
    total.get_or_insert(before);
    true
}

/// [`shorten_list`] for a page that started at `offset`: `next_offset` moves back to the first entry left
/// out, so the caller continues right after the last one shown.
pub fn shorten_page<T>(list: &mut Vec<T>, fraction: f64, offset: usize, next_offset: &mut Option<u64>) -> bool {
    if shorten_list(list, fraction).is_none() {
        return false;
    }
    *next_offset = Some((offset + list.len()) as u64);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortened_pages_continue_after_the_last_entry_kept() {
        let mut page: Vec<u32> = (20..30).collect();
        let mut next = Some(30);
        assert!(shorten_page(&mut page, 0.45, 20, &mut next));
        assert_eq!((page.len(), next), (4, Some(24)));
        let mut last: Vec<u32> = vec![7];
        assert!(!shorten_page(&mut last, 0.1, 0, &mut next), "one entry is never cut");
        assert_eq!(shorten_list(&mut vec![1, 2, 3], 0.01), Some(2), "at least one entry stays");
        let (mut groups, mut total) = ((0..10).collect::<Vec<u32>>(), None);
        assert!(shorten_counted(&mut groups, 0.5, &mut total) && shorten_counted(&mut groups, 0.5, &mut total));
        assert_eq!((groups.len(), total), (2, Some(10)), "the total is the count before the first cut");
    }

    #[test]
    fn next_offset_only_while_results_remain() {
        let paging = Paging::new(20, 10);
        assert_eq!(paging.next_offset(10, Some(45)), Some(30));
        assert_eq!(paging.next_offset(10, Some(30)), None);
        assert_eq!(paging.next_offset(5, Some(25)), None);
        assert_eq!(paging.next_offset(10, None), None, "an unknown total never invents a page");
        // Fewer results looked at than fetched: the next page starts right after the last one looked at.
        assert_eq!(paging.next_offset(3, Some(30)), Some(23));
    }

    #[test]
    fn slices_in_memory_lists() {
        let all: Vec<u32> = (0..7).collect();
        assert_eq!(Paging::new(0, 3).slice(&all), (&all[0..3], Some(3)));
        assert_eq!(Paging::new(6, 3).slice(&all), (&all[6..7], None));
        assert_eq!(Paging::new(100, 3).slice(&all), (&all[7..7], None));
        assert_eq!(Paging::first(7).slice(&all), (&all[..], None));
    }
}
