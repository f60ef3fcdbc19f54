//! Circles in a directed graph, of any length: the strongly connected components (Tarjan's
//! algorithm), and in each component of more than one node a few shortest cycles that together
//! pass through every node of it, so a report names every file caught in a tangle as a path
//! one can follow. Knows nothing of Rust or files; `imports` feeds it the module graph.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// A directed graph: every node with the nodes it points to (a target need not be a key).
pub type Graph<N> = BTreeMap<N, BTreeSet<N>>;

/// The cycles of `graph`, each as its nodes in order (the first follows the last): for every
/// tangle, the shortest cycle through its least node not yet named, until all are named.
pub fn cycles<N: Ord + Clone>(graph: &Graph<N>) -> Vec<Vec<N>> {
    let mut found = Vec::new();
    for component in components(graph).into_iter().filter(|c| c.len() > 1) {
        let mut named = BTreeSet::new();
        for node in &component {
            if named.contains(node) {
                continue;
            }
            if let Some(cycle) = shortest_cycle(graph, &component, node) {
                named.extend(cycle.iter().cloned());
                found.push(cycle);
            }
        }
    }
    found
}

/// The shortest path from `start` back to itself that stays inside `within`.
fn shortest_cycle<N: Ord + Clone>(
    graph: &Graph<N>,
    within: &BTreeSet<N>,
    start: &N,
) -> Option<Vec<N>> {
    let mut came_from: BTreeMap<&N, &N> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for next in graph
            .get(node)
            .into_iter()
            .flatten()
            .filter(|n| within.contains(*n))
        {
            if next == start {
                return Some(path_back(&came_from, start, node));
            }
            if !came_from.contains_key(next) {
                came_from.insert(next, node);
                queue.push_back(next);
            }
        }
    }
    None
}

/// The path `start` … `last`, read back from `last` through `came_from`.
fn path_back<N: Ord + Clone>(came_from: &BTreeMap<&N, &N>, start: &N, last: &N) -> Vec<N> {
    let mut path = vec![last.clone()];
    let mut node = last;
    while node != start {
        node = came_from[node];
        path.push(node.clone());
    }
    path.reverse();
    path
}

/// The strongly connected components of `graph`, each with its nodes sorted.
pub fn components<N: Ord + Clone>(graph: &Graph<N>) -> Vec<BTreeSet<N>> {
    let mut tarjan = Tarjan {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for node in graph.keys() {
        if !tarjan.index.contains_key(node) {
            tarjan.visit(node);
        }
    }
    tarjan.found
}

/// Tarjan's walk: each node's visiting order and the lowest order it reaches back to.
struct Tarjan<'g, N> {
    graph: &'g Graph<N>,
    index: BTreeMap<&'g N, usize>,
    low: BTreeMap<&'g N, usize>,
    stack: Vec<&'g N>,
    on_stack: BTreeSet<&'g N>,
    found: Vec<BTreeSet<N>>,
}

impl<'g, N: Ord + Clone> Tarjan<'g, N> {
    fn visit(&mut self, node: &'g N) {
        let order = self.index.len();
        self.index.insert(node, order);
        self.low.insert(node, order);
        self.stack.push(node);
        self.on_stack.insert(node);
        for next in self.graph.get(node).into_iter().flatten() {
            if !self.index.contains_key(next) {
                self.visit(next);
                self.lower(node, self.low[next]);
            } else if self.on_stack.contains(next) {
                self.lower(node, self.index[next]);
            }
        }
        if self.low[node] == order {
            self.pop_component(node);
        }
    }

    fn lower(&mut self, node: &'g N, to: usize) {
        let low = self.low.get_mut(node).expect("visited");
        *low = (*low).min(to);
    }

    /// Pops the stack down to `root`: one component.
    fn pop_component(&mut self, root: &'g N) {
        let mut component = BTreeSet::new();
        while let Some(node) = self.stack.pop() {
            self.on_stack.remove(node);
            component.insert(node.clone());
            if node == root {
                break;
            }
        }
        self.found.push(component);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(u8, u8)]) -> Graph<u8> {
        let mut graph = Graph::new();
        for (from, to) in edges {
            graph.entry(*from).or_default().insert(*to);
        }
        graph
    }

    #[test]
    fn a_chain_has_no_cycle_and_a_ring_of_three_is_one() {
        assert!(cycles(&graph(&[(1, 2), (2, 3), (1, 3)])).is_empty());
        assert_eq!(
            cycles(&graph(&[(1, 2), (2, 3), (3, 1), (3, 4)])),
            vec![vec![1, 2, 3]]
        );
    }

    #[test]
    fn every_node_of_a_tangle_is_on_a_named_cycle() {
        // 1 ⇄ 2 and 2 → 3 → 4 → 2: one tangle, two shortest cycles cover it.
        let found = cycles(&graph(&[(1, 2), (2, 1), (2, 3), (3, 4), (4, 2)]));
        assert_eq!(found, vec![vec![1, 2], vec![3, 4, 2]]);
    }

    #[test]
    fn two_tangles_are_named_apart() {
        let found = cycles(&graph(&[(1, 2), (2, 1), (5, 6), (6, 5), (2, 5)]));
        assert_eq!(found.len(), 2);
    }
}
