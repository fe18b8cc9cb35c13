//! A crate's modules and the references between them, read from its
//! sources with syn: every `use` and every path in code that starts at
//! `crate`, `super`, `self` or a child module, resolved through imports
//! and re-exports to the module that defines what it names.
//!
//! At every depth, a module's own file (`.`) and its children are the nodes
//! of a graph: a reference from inside one of them to something defined in
//! another is an edge. A `pub use` in a module's own file is its table of
//! contents, not a dependency. A circle in any of these graphs is reported.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

type ModPath = Vec<String>;

#[derive(Default)]
pub struct Tree {
    modules: BTreeSet<ModPath>,
    /// (referring module, absolute path named).
    references: Vec<(ModPath, ModPath)>,
    /// (module, name it imports or re-exports) → absolute path of what the
    /// name stands for.
    aliases: BTreeMap<(ModPath, String), ModPath>,
}

/// The module a file defines: `lib.rs` is the root, `a/mod.rs` and `a.rs`
/// are `a`. Binaries (`main.rs`, `bin/`) are crates of their own: `None`.
fn module_of(src: &Path, file: &Path) -> Option<ModPath> {
    let relative = file.strip_prefix(src).unwrap();
    let mut parts: ModPath = relative
        .iter()
        .map(|part| part.to_string_lossy().into_owned())
        .collect();
    if parts.first().is_some_and(|first| first == "bin") || parts == ["main.rs"] {
        return None;
    }
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if !(stem == "mod" || (parts.is_empty() && stem == "lib")) {
        parts.push(stem.to_owned());
    }
    Some(parts)
}

impl Tree {
    pub fn read(src: &Path, files: &[PathBuf]) -> Tree {
        let mut tree = Tree::default();
        let sources: Vec<(ModPath, syn::File)> = files
            .iter()
            .filter_map(|file| {
                let module = module_of(src, file)?;
                let text = std::fs::read_to_string(file).unwrap();
                let parsed =
                    syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
                Some((module, parsed))
            })
            .collect();
        tree.modules = sources.iter().map(|(module, _)| module.clone()).collect();
        for (module, parsed) in &sources {
            let mut reader = Reader {
                tree: &mut tree,
                file: module.clone(),
                inline: Vec::new(),
            };
            reader.visit_file(parsed);
        }
        tree
    }

    /// The graph of `parent`'s own file (`.`) and its children: which of
    /// them reaches into which.
    pub fn edges(&self, parent: &[String]) -> BTreeMap<String, BTreeSet<String>> {
        let parent = parent.to_vec();
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, path) in &self.references {
            let to = self.resolve(path, 0);
            if let (Some(a), Some(b)) = (node(&parent, from), node(&parent, &to))
                && a != b
            {
                edges.entry(a).or_default().insert(b);
            }
        }
        edges
    }

    /// Every circle, as `module: a → b → a` (`.` is the module's own file).
    pub fn circles(&self) -> Vec<String> {
        let mut circles = Vec::new();
        for parent in &self.modules {
            let edges = self.edges(parent);
            let mut seen = BTreeSet::new();
            for start in edges.keys() {
                if let Some(cycle) = path_back(&edges, start)
                    && seen.insert(sorted(&cycle))
                {
                    let name = if parent.is_empty() {
                        "crate".to_owned()
                    } else {
                        parent.join("::")
                    };
                    circles.push(format!("{name}: {}", cycle.join(" → ")));
                }
            }
        }
        circles
    }

    /// The module defining what `path` names.
    fn resolve(&self, path: &[String], depth: usize) -> ModPath {
        let known = (0..=path.len())
            .rev()
            .find(|&n| self.modules.contains(&path[..n]))
            .unwrap_or(0);
        let module = path[..known].to_vec();
        if let Some(name) = path.get(known)
            && depth < 8
            && let Some(target) = self.aliases.get(&(module.clone(), name.clone()))
        {
            let mut target = target.clone();
            target.extend_from_slice(&path[known + 1..]);
            return self.resolve(&target, depth + 1);
        }
        module
    }
}

/// Which node of `parent`'s graph `module` is in: `.` for the parent's own
/// file, a child's name for anything inside that child, none outside.
fn node(parent: &ModPath, module: &ModPath) -> Option<String> {
    let rest = module.strip_prefix(parent.as_slice())?;
    Some(rest.first().cloned().unwrap_or_else(|| ".".to_owned()))
}

fn sorted(cycle: &[String]) -> Vec<String> {
    let mut nodes = cycle.to_vec();
    nodes.sort();
    nodes.dedup();
    nodes
}

/// A path from `start` back to itself, if there is one.
fn path_back(edges: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    let mut stack = vec![vec![start.to_owned()]];
    let mut seen = BTreeSet::new();
    while let Some(path) = stack.pop() {
        for next in edges.get(path.last().unwrap()).into_iter().flatten() {
            let mut longer = path.clone();
            longer.push(next.clone());
            if next == start {
                return Some(longer);
            }
            if seen.insert(next.clone()) {
                stack.push(longer);
            }
        }
    }
    None
}

struct Reader<'a> {
    tree: &'a mut Tree,
    file: ModPath,
    inline: Vec<String>,
}

impl Reader<'_> {
    fn current(&self) -> ModPath {
        let mut module = self.file.clone();
        module.extend(self.inline.iter().cloned());
        module
    }

    /// `segments` made absolute, if they start inside this crate.
    fn absolute(&self, segments: &[String]) -> Option<ModPath> {
        let mut module = self.current();
        let mut rest = segments;
        match rest.first().map(String::as_str) {
            Some("crate") => {
                module.clear();
                rest = &rest[1..];
            }
            Some("self") => rest = &rest[1..],
            Some("super") => {
                while rest.first().is_some_and(|s| s == "super") {
                    module.pop();
                    rest = &rest[1..];
                }
            }
            Some(first) => {
                let mut child = self.file.clone();
                child.push(first.to_owned());
                if self.inline.is_empty() && self.tree.modules.contains(&child) {
                    module = self.file.clone();
                } else {
                    return None;
                }
            }
            None => return None,
        }
        module.extend(rest.iter().cloned());
        Some(module)
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree, public: bool) {
        match tree {
            syn::UseTree::Path(path) => {
                prefix.push(path.ident.to_string());
                self.use_tree(prefix, &path.tree, public);
                prefix.pop();
            }
            syn::UseTree::Group(group) => {
                for item in &group.items {
                    self.use_tree(prefix, item, public);
                }
            }
            syn::UseTree::Name(name) => {
                let name = name.ident.to_string();
                self.imported(prefix, &name, &name, public);
            }
            syn::UseTree::Rename(rename) => {
                let (name, alias) = (rename.ident.to_string(), rename.rename.to_string());
                self.imported(prefix, &name, &alias, public);
            }
            syn::UseTree::Glob(_) => {
                if let Some(path) = self.absolute(prefix) {
                    self.record(path, public);
                }
            }
        }
    }

    fn imported(&mut self, prefix: &[String], name: &str, alias: &str, public: bool) {
        let mut segments = prefix.to_vec();
        if name != "self" {
            segments.push(name.to_owned());
        }
        let Some(path) = self.absolute(&segments) else {
            return;
        };
        // Any `use` is a name other modules can reach through (children
        // see their parent's private imports): resolve through it.
        let key = (self.current(), alias.to_owned());
        self.tree.aliases.insert(key, path.clone());
        self.record(path, public);
    }

    /// A `pub use` is the module's table of contents: not a dependency.
    fn record(&mut self, path: ModPath, public: bool) {
        if !public {
            self.tree.references.push((self.file.clone(), path));
        }
    }
}

impl<'ast> Visit<'ast> for Reader<'_> {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let public = !matches!(item.vis, syn::Visibility::Inherited);
        self.use_tree(&mut Vec::new(), &item.tree, public);
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        if item.content.is_some() {
            self.inline.push(item.ident.to_string());
            syn::visit::visit_item_mod(self, item);
            self.inline.pop();
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if path.leading_colon.is_none()
            && segments.len() > 1
            && let Some(absolute) = self.absolute(&segments)
        {
            self.record(absolute, false);
        }
        syn::visit::visit_path(self, path);
    }
}
