//! The path of a node the schema validator visits, as kube-openapi names it (`spec.replicas`,
//! `spec.containers[0]`, `.key` for a map entry at the root), kept as links to its parent and rendered
//! only when an error needs it. Almost every node is valid, and building each node's path as a string
//! cost an allocation per node of every validated write.

use std::fmt;

/// Where a node sits in the validated value.
#[derive(Clone, Copy)]
pub enum NodePath<'p> {
    /// The validated value itself (an empty name).
    Root,
    /// A property of an object.
    Property {
        /// The object's path.
        parent: &'p NodePath<'p>,
        /// The property's name.
        name: &'p str,
        /// Joined with a dot even at the root, as kube-openapi joins additional properties and
        /// required fields (`.key`).
        always_dotted: bool,
    },
    /// An item of an array.
    Item {
        /// The array's path.
        parent: &'p NodePath<'p>,
        /// The item's position.
        index: usize,
    },
}

impl<'p> NodePath<'p> {
    /// A declared property of this node.
    pub fn property(&'p self, name: &'p str) -> NodePath<'p> {
        NodePath::Property { parent: self, name, always_dotted: false }
    }

    /// A map entry (an additional property) or a required field of this node.
    pub fn entry(&'p self, name: &'p str) -> NodePath<'p> {
        NodePath::Property { parent: self, name, always_dotted: true }
    }

    /// Item `index` of this array node.
    pub fn item(&'p self, index: usize) -> NodePath<'p> {
        NodePath::Item { parent: self, index }
    }
}

impl fmt::Display for NodePath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NodePath::Root => Ok(()),
            NodePath::Property { parent: NodePath::Root, name, always_dotted: false } => f.write_str(name),
            NodePath::Property { parent, name, .. } => write!(f, "{parent}.{name}"),
            NodePath::Item { parent, index } => write!(f, "{parent}[{index}]"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::NodePath;

    #[test]
    fn paths_render_as_the_validator_names_them() {
        let root = NodePath::Root;
        let spec = root.property("spec");
        let containers = spec.property("containers");
        let first = containers.item(0);
        assert_eq!(root.to_string(), "");
        assert_eq!(first.property("name").to_string(), "spec.containers[0].name");
        assert_eq!(root.entry("key").to_string(), ".key");
        assert_eq!(spec.entry("key").to_string(), "spec.key");
        assert_eq!(root.item(2).to_string(), "[2]");
    }
}
