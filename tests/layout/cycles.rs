//! Cycle detection in a module graph (Tarjan, then a shortest circle per component) and its report.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Module -> module it references -> where.
pub type Graph = BTreeMap<String, BTreeMap<String, Vec<String>>>;

/// One cycle from each strongly connected component with more than one module.
pub fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    // Tarjan's algorithm; the graphs are small.
    struct State<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        components: Vec<Vec<&'g str>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph[v].keys() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w);
                if w == v {
                    break;
                }
            }
            s.components.push(component);
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        components: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v.as_str()) {
            visit(&mut state, v);
        }
    }
    let mut found = Vec::new();
    for component in state.components.into_iter().filter(|c| c.len() > 1) {
        // The shortest cycle through the component's first module, by breadth-first search within it.
        let members: BTreeSet<&str> = component.iter().copied().collect();
        let start = *members.iter().next().expect("not empty");
        let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue = VecDeque::from([start]);
        'search: while let Some(v) = queue.pop_front() {
            for w in graph[v].keys().map(String::as_str).filter(|w| members.contains(w)) {
                if w == start {
                    let mut cycle = vec![v.to_owned()];
                    let mut at = v;
                    while at != start {
                        at = came_from[at];
                        cycle.push(at.to_owned());
                    }
                    cycle.reverse();
                    found.push(cycle);
                    break 'search;
                }
                if !came_from.contains_key(w) {
                    came_from.insert(w, v);
                    queue.push_back(w);
                }
            }
        }
    }
    found
}

/// A readable account of a cycle: the circle, then each step with the references that make it.
pub fn describe_cycle(graph: &Graph, cycle: &[String]) -> String {
    let mut circle = cycle.to_vec();
    circle.push(cycle[0].clone());
    let mut text = circle.join(" -> ");
    for pair in circle.windows(2) {
        let places = &graph[&pair[0]][&pair[1]];
        text.push_str(&format!("\n      {} -> {}:", pair[0], pair[1]));
        for place in places.iter().take(4) {
            text.push_str(&format!("\n        {place}"));
        }
        if places.len() > 4 {
            text.push_str(&format!("\n        … and {} more", places.len() - 4));
        }
    }
    text
}
