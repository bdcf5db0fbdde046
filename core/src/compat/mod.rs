//! The peer-compatibility modes, one file each, every one placing keys
//! exactly as its peer system does: the ketama family (libmemcached's
//! weighted ketama, libketama) and the modes built on its continuum builder
//! (libmemcached, twemproxy, uhashring, npm hashring), nginx, Envoy's and
//! gRPC's ring hash, Envoy's Maglev and HAProxy's consistent hash.

pub mod envoy_grpc;
pub(crate) mod envoy_maglev;
pub mod haproxy;
pub(crate) mod hashring_js;
pub mod ketama;
pub(crate) mod libmemcached;
pub mod nginx;
pub mod twemproxy;
pub(crate) mod uhashring;
