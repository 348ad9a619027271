//! Checking a module graph against layers: each module may reference modules of its own layer or below, never
//! above, and some pairs never at all.

use super::cycles::Graph;

/// The layers of a crate's top-level modules, highest first: a name for each and its modules.
pub type Layers = [(&'static str, &'static [&'static str])];

/// A reference that is refused even within a layer: (from, to, why).
pub type Never = [(&'static str, &'static str, &'static str)];

/// The layer of `module`, as an index (0 = highest).
fn layer_of(layers: &Layers, module: &str) -> Option<usize> {
    layers.iter().position(|(_, modules)| modules.contains(&module))
}

/// Where a reference is written, for messages (at most four places, then a count).
fn places(graph: &Graph, from: &str, to: &str) -> String {
    let all = &graph[from][to];
    let mut text = all.iter().take(4).map(|p| format!("\n      {p}")).collect::<String>();
    if all.len() > 4 {
        text.push_str(&format!("\n      … and {} more", all.len() - 4));
    }
    text
}

/// What breaks the layers in `graph` (the top-level modules of the crate in `src`), each with what to move where.
/// A module no layer lists is a failure too, saying where to add it.
pub fn layer_violations(src: &str, graph: &Graph, layers: &Layers, never: &Never) -> Vec<String> {
    let mut failures = Vec::new();
    for module in graph.keys() {
        if layer_of(layers, module).is_none() {
            let names: Vec<String> =
                layers.iter().map(|(name, modules)| format!("{name} ({})", modules.join(", "))).collect();
            failures.push(format!(
                "{src}/{module} is in no layer: add it to the layer it belongs to in SERVER_LAYERS in tests/layout.rs \
                 (highest first: {}); it may then reference its own layer and those below",
                names.join(" → ")
            ));
        }
    }
    for (from, targets) in graph {
        let Some(from_layer) = layer_of(layers, from) else { continue };
        for to in targets.keys() {
            if let Some((_, _, why)) = never.iter().find(|(a, b, _)| a == from && b == to) {
                failures.push(format!(
                    "{src}/{from} must not reference {to} ({why}), but does at:{}\n    Move what {from} takes from \
                     {to} into {from} or a module of a lower layer, or have the caller hand it in",
                    places(graph, from, to)
                ));
                continue;
            }
            let Some(to_layer) = layer_of(layers, to) else { continue };
            if to_layer < from_layer {
                let (from_name, to_name) = (layers[from_layer].0, layers[to_layer].0);
                let below: Vec<&str> = layers[from_layer..].iter().flat_map(|(_, m)| m.iter().copied()).collect();
                failures.push(format!(
                    "{src}/{from} ({from_name}) references {to} ({to_name}, a higher layer) at:{}\n    References \
                     point down only: move what {from} takes from {to} down into {from} or a module it may use ({}), \
                     or have {to} hand it in as an argument",
                    places(graph, from, to),
                    below.join(", ")
                ));
            }
        }
    }
    failures
}
