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

/// The role names' stem: the prefix's segments joined by `-`
/// (`/shardring/cache` gives `shardring-cache`), so the rings of one etcd
/// keep apart.
pub(crate) fn stem(layout: &Layout) -> String {
    layout.prefix().split('/').filter(|s| !s.is_empty()).collect::<Vec<_>>().join("-")
}

/// Writes the `etcdctl` commands creating the roles for the ring under
/// `layout`: `STEM-follower` reads `P/` (followers, `watch`, `route`);
/// `STEM-operator` reads and writes `P/` (`member config`, `set-state`,
/// `leave`, `rebalance --etcd`); `STEM-member-ID` per member id reads and
/// writes `P/members/ID` alone (`member join --id ID`: its lease grant and
/// keep-alives need no key permission, its revoke needs write on the key).
///
/// Errors: an empty member id, or one holding `/` (it would name another
/// member's key range).
pub(crate) fn print(layout: &Layout, members: &[String], out: &mut impl Write) -> Result<(), CliError> {
    if let Some(bad) = members.iter().find(|id| id.is_empty() || id.contains('/')) {
        return Err(CliError::Membership(format!("--member {bad:?}: a member id is non-empty and holds no '/'")));
    }
    let stem = stem(layout);
    let root = layout.root();
    writeln!(out, "# Roles of least privilege for the ring under {root} (etcd v3 auth).")?;
    writeln!(out, "# Run with etcdctl's connection flags as the root user (--endpoints, --cacert, --cert, --key).")?;
    writeln!(out, "etcdctl role add {}", quoted(&format!("{stem}-follower")))?;
    writeln!(
        out,
        "etcdctl role grant-permission --prefix=true {} read {}",
        quoted(&format!("{stem}-follower")),
        quoted(&root)
    )?;
    writeln!(out, "etcdctl role add {}", quoted(&format!("{stem}-operator")))?;
    writeln!(
        out,
        "etcdctl role grant-permission --prefix=true {} readwrite {}",
        quoted(&format!("{stem}-operator")),
        quoted(&root)
    )?;
    for id in members {
        let role = quoted(&format!("{stem}-member-{id}"));
        writeln!(out, "etcdctl role add {role}")?;
        writeln!(out, "etcdctl role grant-permission {role} readwrite {}", quoted(&layout.member_key(id)))?;
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
                "etcdctl role add shardring-cache-follower",
                "etcdctl role grant-permission --prefix=true shardring-cache-follower read /shardring/cache/",
                "etcdctl role add shardring-cache-operator",
                "etcdctl role grant-permission --prefix=true shardring-cache-operator readwrite /shardring/cache/",
                "etcdctl role add shardring-cache-member-10.0.0.1:11211",
                "etcdctl role grant-permission shardring-cache-member-10.0.0.1:11211 readwrite /shardring/cache/members/10.0.0.1:11211",
                r"etcdctl role add 'shardring-cache-member-it'\''s'",
                r"etcdctl role grant-permission 'shardring-cache-member-it'\''s' readwrite '/shardring/cache/members/it'\''s'",
            ]
        );
        assert!(print(&layout, &["a/b".into()], &mut Vec::new()).is_err());
    }
}
