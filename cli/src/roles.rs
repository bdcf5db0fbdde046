//! `shardring member roles`: the etcd roles of least privilege for one
//! ring, printed as the `etcdctl` commands that create them
//! (`docs/security.md`, *Roles*). Nothing here connects to etcd.

use std::io::Write;

use shardring_membership::Layout;

use crate::error::CliError;

/// `text` quoted for a POSIX shell: bare when it holds only characters no
/// shell treats specially, else in single quotes (a `'` inside becomes
/// `'\''`).
fn quoted(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        return text.to_owned();
    }
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The role of `kind` over `range` (a prefix or a key):
/// `shardring-KIND@RANGE`. The name holds the range itself, so no two rings
/// (or members) share a role: `KIND` holds no `@`, and a member id holds no
/// `/`, so `P/members/ID` splits one way only.
fn role(kind: &str, range: &str) -> String {
    format!("shardring-{kind}@{range}")
}

/// Writes the `etcdctl` commands creating the roles for the ring under
/// `layout`: `shardring-follower@P/` reads `P/` (followers, `watch`);
/// `shardring-reporter@P/clients/` writes the clients' reports (a follower
/// with a client id, `watch --report-as`);
/// `shardring-operator@P/` reads and writes `P/` (`member config`,
/// `set-state`, `leave`, `rebalance --etcd`); `shardring-member@P/members/ID`
/// per member id reads and writes `P/members/ID` alone and reads the move
/// lock `P/move` (`member join --id ID`: its lease grant and keep-alives
/// need no key permission, its revoke needs write on the key, its
/// registration compares the lock).
///
/// Errors: an empty member id or one holding `/` (it would name another
/// member's key range); a prefix or id holding a control character (a line
/// break would end a command of the script).
pub(crate) fn print(layout: &Layout, members: &[String], out: &mut impl Write) -> Result<(), CliError> {
    if layout.prefix().chars().any(char::is_control) {
        return Err(CliError::Membership(format!(
            "--prefix {:?}: a prefix for roles holds no control characters",
            layout.prefix()
        )));
    }
    if let Some(bad) = members.iter().find(|id| id.is_empty() || id.contains('/') || id.chars().any(char::is_control)) {
        return Err(CliError::Membership(format!(
            "--member {bad:?}: a member id is non-empty and holds no '/' and no control character"
        )));
    }
    let root = layout.root();
    let (follower, operator) = (quoted(&role("follower", &root)), quoted(&role("operator", &root)));
    writeln!(out, "# Roles of least privilege for the ring under {root} (etcd v3 auth).")?;
    writeln!(out, "# Run with etcdctl's connection flags as the root user (--endpoints, --cacert, --cert, --key).")?;
    writeln!(out, "etcdctl role add {follower}")?;
    writeln!(out, "etcdctl role grant-permission --prefix=true {follower} read {}", quoted(&root))?;
    // Followers that report themselves (`P/clients/<id>`) also need this one.
    let reporter = quoted(&role("reporter", &layout.clients_prefix()));
    writeln!(out, "etcdctl role add {reporter}")?;
    writeln!(
        out,
        "etcdctl role grant-permission --prefix=true {reporter} readwrite {}",
        quoted(&layout.clients_prefix())
    )?;
    writeln!(out, "etcdctl role add {operator}")?;
    writeln!(out, "etcdctl role grant-permission --prefix=true {operator} readwrite {}", quoted(&root))?;
    for id in members {
        let key = layout.member_key(id);
        let member = quoted(&role("member", &key));
        writeln!(out, "etcdctl role add {member}")?;
        writeln!(out, "etcdctl role grant-permission {member} readwrite {}", quoted(&key))?;
        // Its registration compares the move lock: no member joins mid-move.
        writeln!(out, "etcdctl role grant-permission {member} read {}", quoted(&layout.move_key()))?;
    }
    writeln!(out, "# Then one user per client, given its role (with client certificates and no password,")?;
    writeln!(out, "# etcd takes the certificate's common name as the user):")?;
    writeln!(out, "#   etcdctl user add NAME && etcdctl user grant-role NAME ROLE")?;
    writeln!(out, "# and, once a root user exists: etcdctl auth enable")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_cover_the_prefix_and_each_member_key_alone_and_quote_for_the_shell() {
        let layout = Layout::new("/shardring/cache").unwrap();
        let mut out = Vec::new();
        print(&layout, &["10.0.0.1:11211".into(), "it's".into()], &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let commands: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(
            commands,
            [
                "etcdctl role add shardring-follower@/shardring/cache/",
                "etcdctl role grant-permission --prefix=true shardring-follower@/shardring/cache/ read /shardring/cache/",
                "etcdctl role add shardring-reporter@/shardring/cache/clients/",
                "etcdctl role grant-permission --prefix=true shardring-reporter@/shardring/cache/clients/ readwrite \
                 /shardring/cache/clients/",
                "etcdctl role add shardring-operator@/shardring/cache/",
                "etcdctl role grant-permission --prefix=true shardring-operator@/shardring/cache/ readwrite \
                 /shardring/cache/",
                "etcdctl role add shardring-member@/shardring/cache/members/10.0.0.1:11211",
                "etcdctl role grant-permission shardring-member@/shardring/cache/members/10.0.0.1:11211 readwrite \
                 /shardring/cache/members/10.0.0.1:11211",
                "etcdctl role grant-permission shardring-member@/shardring/cache/members/10.0.0.1:11211 read \
                 /shardring/cache/move",
                r"etcdctl role add 'shardring-member@/shardring/cache/members/it'\''s'",
                r"etcdctl role grant-permission 'shardring-member@/shardring/cache/members/it'\''s' readwrite '/shardring/cache/members/it'\''s'",
                r"etcdctl role grant-permission 'shardring-member@/shardring/cache/members/it'\''s' read /shardring/cache/move",
            ]
        );
        assert!(print(&layout, &["a/b".into()], &mut Vec::new()).is_err());
        assert!(print(&layout, &["a\nb".into()], &mut Vec::new()).is_err());
        let broken = Layout::new("/x\ntouch /tmp/pwned #").unwrap();
        assert!(print(&broken, &[], &mut Vec::new()).is_err());
    }

    #[test]
    fn no_two_rings_or_members_share_a_role() {
        let roles = |prefix: &str, id: &str| {
            let mut out = Vec::new();
            print(&Layout::new(prefix).unwrap(), &[id.to_owned()], &mut out).unwrap();
            let text = String::from_utf8(out).unwrap();
            text.lines().filter(|l| l.starts_with("etcdctl role add")).map(str::to_owned).collect::<Vec<_>>()
        };
        // Joining the prefix's segments with '-' gave these pairs one role each.
        for ((p1, m1), (p2, m2)) in [(("/a-b", "m"), ("/a/b", "m")), (("/a", "b-member-c"), ("/a/member/b", "c"))] {
            let (first, second) = (roles(p1, m1), roles(p2, m2));
            assert!(first.iter().all(|role| !second.contains(role)), "{first:?} {second:?}");
        }
    }
}
