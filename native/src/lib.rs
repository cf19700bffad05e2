//! The native fast path of kafka-conformance: the records region of a magic-2 batch.
//!
//! This crate is an optimisation beside the pure-Python reference (`conformance/wire/record.py`,
//! Kafka's `DefaultRecord.readFrom`), never a second definition of it. Its one rule: for any
//! input it is not sure about, it *declines* (returns `None`) having handed out nothing, and
//! the caller decodes that region with the reference reader, so every verdict, message and
//! position is the reference's. `tests/test_fast_path.py`, `tests/test_native.py` and the fuzz
//! target `native` hold it to the reference on every corpus input and on fuzzed ones.
//!
//! Record layout (`DefaultRecord`), and what this crate decides itself:
//!
//! | field               | type    | decided here                                        |
//! |---------------------|---------|-----------------------------------------------------|
//! | length              | varint  | >= 6, the record wholly inside the region           |
//! | attributes          | int8    | any value                                           |
//! | timestampDelta      | varlong | 1-9 bytes, \|delta\| < 2^62 (no int64 wrap-around)  |
//! | offsetDelta         | varint  | 1-5 bytes (Java's int arithmetic)                   |
//! | keyLength / key     | varint  | < 0 is null                                         |
//! | valueLength / value | varint  | < 0 is null                                         |
//! | headerCount         | varint  | one byte, even (0..63 headers)                      |
//! |   headerKeyLength   | varint  | one byte, even (0..63 bytes)                        |
//! |   headerKey         | bytes   | valid UTF-8 only (Java's replacement rules: decline) |
//! |   headerValueLength | varint  | < 0 is null                                         |
//! |   headerValue       | bytes   |                                                     |
//!
//! A record whose fields do not end exactly at `length`, a region not consumed exactly by
//! `count` records, a varint Java finds too long or a 10-byte varlong: declined.
//! Every read is bounds-checked. `unsafe` appears only in the ffi calls that make a row's
//! objects (each block says why it is sound); a panic (a bug) reaches Python as
//! `pyo3_runtime.PanicException`, never an abort.

use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyBytes, PyList, PySlice, PyString, PyTuple, PyType};

mod run;
mod snappy;
mod whole;

/// Base offsets and timestamps outside (-2^62, 2^62) could wrap around int64 once a delta is
/// added: the reference decides those.
const LIMIT: i64 = 1 << 62;

/// Why a region is declined: only ever "not sure", so the reference decides.
struct Decline;

type Parsed<T> = Result<T, Decline>;

/// A zig-zag varint of at most `max_bytes` bytes inside `buf[..end]`.
#[inline(always)]
fn varint(buf: &[u8], pos: &mut usize, end: usize, max_bytes: u32) -> Parsed<i64> {
    let mut raw: u64 = 0;
    let mut shift: u32 = 0;
    loop {
        if *pos >= end || shift >= 7 * max_bytes {
            return Err(Decline);
        }
        let b = buf[*pos];
        *pos += 1;
        raw |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            break;
        }
        shift += 7;
    }
    Ok(((raw >> 1) as i64) ^ -((raw & 1) as i64))
}

/// Java's `readVarint`: at most 5 bytes, the fifth contributing its low 4 bits only (Java's
/// `int` drops the rest) and ending the varint (its high bit set: "Varint is too long",
/// declined); the zig-zag of the unsigned 32-bit value.
#[inline(always)]
fn varint32(buf: &[u8], pos: &mut usize, end: usize) -> Parsed<i64> {
    let mut raw: u32 = 0;
    let mut shift: u32 = 0;
    loop {
        if *pos >= end {
            return Err(Decline);
        }
        let b = buf[*pos];
        *pos += 1;
        if shift == 28 {
            if b & 0x80 != 0 {
                return Err(Decline);
            }
            raw |= u32::from(b & 0x0f) << 28;
            break;
        }
        raw |= u32::from(b & 0x7f) << shift;
        if b < 0x80 {
            break;
        }
        shift += 7;
    }
    Ok(i64::from(raw >> 1) ^ -i64::from(raw & 1))
}

/// A byte field: a length varint, then that many bytes (a negative length is null).
#[inline(always)]
fn nullable(buf: &[u8], pos: &mut usize, end: usize) -> Parsed<Option<(usize, usize)>> {
    let n = varint32(buf, pos, end)?;
    if n < 0 {
        return Ok(None);
    }
    let start = *pos;
    let stop = start.checked_add(n as usize).ok_or(Decline)?;
    if stop > end {
        return Err(Decline);
    }
    *pos = stop;
    Ok(Some((start, stop)))
}

/// One record's fields, as positions in the region.
struct Fields {
    length: i64,
    attributes: u8,
    timestamp_delta: i64,
    offset_delta: i64,
    key: Option<(usize, usize)>,
    value: Option<(usize, usize)>,
}

/// A header: its key's bytes (valid UTF-8) and its value.
struct HeaderAt {
    key: (usize, usize),
    value: Option<(usize, usize)>,
}

/// Read one record at `pos`. `checked` false: the checking pass (header keys must be UTF-8);
/// true: the region passed it, so the record's headers are collected into `headers` (cleared
/// first) and keys are not checked again.
#[inline(always)]
fn read_record(
    buf: &[u8],
    pos: &mut usize,
    headers: &mut Vec<HeaderAt>,
    checked: bool,
) -> Parsed<Fields> {
    headers.clear();
    let n = buf.len();
    let length = varint32(buf, pos, n)?;
    if length < 6 {
        return Err(Decline);
    }
    let end = pos.checked_add(length as usize).ok_or(Decline)?;
    if end > n {
        return Err(Decline);
    }
    let attributes = buf[*pos];
    *pos += 1;
    let timestamp_delta = varint(buf, pos, end, 9)?;
    if !(-LIMIT < timestamp_delta && timestamp_delta < LIMIT) {
        return Err(Decline);
    }
    let offset_delta = varint32(buf, pos, end)?;
    let key = nullable(buf, pos, end)?;
    let value = nullable(buf, pos, end)?;
    if *pos >= end {
        return Err(Decline);
    }
    let count = buf[*pos];
    *pos += 1;
    if count >= 0x80 || count & 1 != 0 {
        return Err(Decline);
    }
    for _ in 0..(count >> 1) {
        if *pos >= end {
            return Err(Decline);
        }
        let b = buf[*pos];
        *pos += 1;
        if b >= 0x80 || b & 1 != 0 {
            return Err(Decline);
        }
        let kstart = *pos;
        let kstop = kstart + usize::from(b >> 1);
        if kstop > end || (!checked && std::str::from_utf8(&buf[kstart..kstop]).is_err()) {
            return Err(Decline);
        }
        *pos = kstop;
        let value = nullable(buf, pos, end)?;
        if checked {
            headers.push(HeaderAt {
                key: (kstart, kstop),
                value,
            });
        }
    }
    if *pos != end {
        return Err(Decline);
    }
    Ok(Fields {
        length,
        attributes,
        timestamp_delta,
        offset_delta,
        key,
        value,
    })
}

/// Validate the whole region (`count` records, exactly); the start of the first `keep`.
fn read_region(buf: &[u8], count: u64, keep: u64) -> Parsed<Vec<u32>> {
    let mut pos = 0usize;
    let mut starts = Vec::with_capacity(keep.min(count).min(1 << 16) as usize);
    let mut scratch: Vec<HeaderAt> = Vec::new();
    if buf.len() > (u32::MAX / 2) as usize {
        return Err(Decline);
    }
    for i in 0..count {
        // every record takes at least 7 bytes: a huge count over a short region ends here
        if pos >= buf.len() {
            return Err(Decline);
        }
        if i < keep {
            starts.push(pos as u32);
        }
        read_record(buf, &mut pos, &mut scratch, false)?;
    }
    if pos != buf.len() {
        return Err(Decline);
    }
    Ok(starts)
}

/// A Python object owned while the GIL is held: dropping it decrements the count directly
/// (a `Py<PyAny>` dropped goes through pyo3's deferred-decref check, measured at ~5% of an
/// iteration in `perf`).
type Obj<'py> = Bound<'py, PyAny>;

/// A new reference, or the Python error that made it null.
fn owned(py: Python<'_>, p: *mut ffi::PyObject) -> PyResult<Obj<'_>> {
    // SAFETY: `p` is a new (owned) reference returned by a CPython constructor, or null with
    // an exception set; from_owned_ptr_or_err takes over exactly that reference.
    unsafe { Bound::from_owned_ptr_or_err(py, p) }
}

fn none(py: Python<'_>) -> Obj<'_> {
    py.None().into_bound(py)
}

fn new_bytes<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Obj<'py>> {
    // SAFETY: the pointer and length describe a live slice; CPython copies the bytes.
    owned(py, unsafe {
        ffi::PyBytes_FromStringAndSize(data.as_ptr().cast(), data.len() as ffi::Py_ssize_t)
    })
}

fn new_int(py: Python<'_>, v: i64) -> PyResult<Obj<'_>> {
    // SAFETY: a plain constructor call; the result is checked by `owned`.
    owned(py, unsafe { ffi::PyLong_FromLongLong(v) })
}

/// Ints `0..SMALL` made once and shared: a record's offset and timestamp deltas and its size
/// are small in almost every batch (offset deltas run 0..count-1), and CPython shares only
/// -5..256 itself.
const SMALL: i64 = 4096;
static SMALL_INTS: GILOnceCell<Vec<PyObject>> = GILOnceCell::new();

fn small_int(py: Python<'_>, v: i64) -> PyResult<Obj<'_>> {
    if !(0..SMALL).contains(&v) {
        return new_int(py, v);
    }
    let ints = SMALL_INTS.get_or_try_init(py, || {
        (0..SMALL)
            .map(|i| new_int(py, i).map(Bound::unbind))
            .collect::<PyResult<Vec<_>>>()
    })?;
    Ok(ints[v as usize].bind(py).clone())
}

fn bytes_or_none<'py>(
    py: Python<'py>,
    buf: &[u8],
    at: Option<(usize, usize)>,
) -> PyResult<Obj<'py>> {
    match at {
        Some((a, b)) => new_bytes(py, &buf[a..b]),
        None => Ok(none(py)),
    }
}

/// A tuple of `items`, filled directly: making rows is the measured hot spot of a decode
/// (`perf record` of an iteration: CPython's allocation and tuple calls take most of it), so
/// the one tuple a row needs is made without pyo3's generic iterator plumbing.
fn new_tuple<'py, const N: usize>(py: Python<'py>, items: [Obj<'py>; N]) -> PyResult<Obj<'py>> {
    // SAFETY: PyTuple_New(N) returns a tuple with N empty slots (or null, checked); each slot
    // is filled exactly once, in range, with a reference PyTuple_SetItem steals (into_ptr
    // hands it over), so no reference is leaked or freed twice.
    unsafe {
        let t = owned(py, ffi::PyTuple_New(N as ffi::Py_ssize_t))?;
        for (i, item) in items.into_iter().enumerate() {
            ffi::PyTuple_SetItem(t.as_ptr(), i as ffi::Py_ssize_t, item.into_ptr());
        }
        Ok(t)
    }
}

/// Stop the garbage collector tracking a new tuple that holds only `str`, `bytes`, `None` or
/// such untracked tuples: it can never be part of a reference cycle, and CPython itself
/// untracks such a tuple the first time a collection sees it (`_PyTuple_MaybeUntrack`); done
/// at once, the collections a decode triggers have fewer young objects to walk (`perf
/// record` of a decode put the collector, `gc_collect_main` and its visits, at ~4%).
fn untrack(tuple: &Obj<'_>) {
    // SAFETY: a live tuple, tracked since PyTuple_New; untracking a tracked object once is
    // what PyObject_GC_UnTrack is for (it also accepts an untracked one)
    unsafe { ffi::PyObject_GC_UnTrack(tuple.as_ptr().cast()) }
}

/// How to make a `conformance.wire.record.Record` without running its `__init__` (which only
/// stores its arguments): the type's allocator, then each `__slots__` slot stored at its place
/// in the object, in the order of a row and then `control` (None): no Python-level call, no
/// descriptor call and no row tuple per record when a decode is iterated.
///
/// Where each slot lives is found once, here, by asking CPython rather than assuming a layout:
/// a probe instance gets a distinct sentinel in each slot through the slot's own member
/// descriptor, and the one pointer-sized word of the instance holding that sentinel is the
/// slot. Storing a new reference there is what the descriptor does for a slot still empty
/// (`PyMember_SetOne`, `Py_T_OBJECT_EX`). `perf record` of a decode put the 12 descriptor
/// calls per record (`member_set`, `PyMember_SetOne`) at 2.5% of its samples.
#[pyclass(module = "kafka_conformance_native", frozen)]
struct RecordMaker {
    slots: Slots,
    /// header keys already made as `str`, and a scratch list of header positions, for
    /// `RecordRows.records()` (only ever locked with the GIL held, so never contended)
    scratch: std::sync::Mutex<(KeyCache, Vec<HeaderAt>)>,
}

/// A slotted class's allocator and where each of the named slots lives in its instances
/// (the probe below); `RecordMaker` and `SlotMaker` are its two faces.
struct Slots {
    cls: Py<PyType>,
    alloc: ffi::allocfunc,
    offsets: Vec<usize>,
    gc: bool, // instances are tracked by the garbage collector (Py_TPFLAGS_HAVE_GC)
}

const WORD: usize = std::mem::size_of::<*mut ffi::PyObject>();

impl Slots {
    fn probe(py: Python<'_>, cls: &Bound<'_, PyType>, fields: &[String]) -> PyResult<Self> {
        let namespace = cls.getattr("__dict__")?;
        let basicsize: usize = cls.getattr("__basicsize__")?.extract()?;
        // SAFETY: PyType_GetSlot on a live type object; every type has an allocator, checked
        // for null before the transmute to the Py_tp_alloc slot's signature
        let alloc = unsafe { ffi::PyType_GetSlot(cls.as_type_ptr(), ffi::Py_tp_alloc) };
        if alloc.is_null() {
            return Err(PyValueError::new_err("the type has no allocator"));
        }
        let alloc: ffi::allocfunc = unsafe { std::mem::transmute(alloc) };
        // SAFETY: the allocator returns a new zeroed instance of `cls` (or null, checked)
        let probe = owned(py, unsafe { alloc(cls.as_type_ptr(), 0) })?;
        let object = py.import("builtins")?.getattr("object")?;
        let mut offsets = Vec::with_capacity(fields.len());
        for name in fields {
            let descr = namespace.get_item(name)?;
            if descr.get_type().name()? != "member_descriptor" {
                return Err(PyValueError::new_err(format!(
                    "{name} is not a __slots__ slot"
                )));
            }
            let sentinel = object.call0()?;
            descr.call_method1("__set__", (&probe, &sentinel))?;
            let base = probe.as_ptr() as *const u8;
            let found: Vec<usize> = (0..basicsize / WORD)
                .map(|w| w * WORD)
                // SAFETY: every word read lies inside the instance (basicsize bytes, the
                // size CPython allocated for it), read unaligned-safe as a raw pointer value
                .filter(|&off| unsafe {
                    std::ptr::read_unaligned(base.add(off) as *const *mut ffi::PyObject)
                } == sentinel.as_ptr())
                .collect();
            match found.as_slice() {
                [off] if !offsets.contains(off) => offsets.push(*off),
                _ => {
                    return Err(PyValueError::new_err(format!(
                        "the slot {name} was not found in the instance"
                    )))
                }
            }
        }
        let flags: u64 = cls.getattr("__flags__")?.extract()?;
        Ok(Slots {
            cls: cls.clone().unbind(),
            alloc,
            offsets,
            gc: flags & ffi::Py_TPFLAGS_HAVE_GC != 0,
        })
    }

    /// `make`, then the instance untracked by the garbage collector: for objects that
    /// cannot be part of a reference cycle when made (they refer only to objects made with
    /// them, none of which refers back). A cycle a caller builds through one later is never
    /// freed wrongly: the collector counts an untracked object's references as external ones,
    /// so the worst case is a leak. A decode of small batches keeps three such objects per
    /// batch; tracked, the collections they set off took a third of its time.
    fn make_untracked<'py, const N: usize>(
        &self,
        py: Python<'py>,
        values: [Obj<'py>; N],
    ) -> PyResult<Obj<'py>> {
        let obj = self.make(py, values)?;
        if self.gc {
            // SAFETY: a live instance of a type with Py_TPFLAGS_HAVE_GC, tracked by its
            // allocator (PyType_GenericAlloc); untracking it once is what the call is for
            unsafe { ffi::PyObject_GC_UnTrack(obj.as_ptr().cast()) }
        }
        Ok(obj)
    }

    /// A new instance with each slot holding one of `values`, in the order of the fields.
    fn make<'py, const N: usize>(
        &self,
        py: Python<'py>,
        values: [Obj<'py>; N],
    ) -> PyResult<Obj<'py>> {
        if N != self.offsets.len() {
            return Err(PyValueError::new_err(format!(
                "{} slots to fill, {N} values given",
                self.offsets.len()
            )));
        }
        // SAFETY: the allocator returns a new zeroed instance of the class (or null, checked
        // by `owned`), so every slot is empty; each offset is a distinct slot of that class
        // found by `probe`, inside the instance; each slot takes over one owned reference
        // (into_ptr), which the instance's dealloc releases, as for a slot set from Python.
        // Nothing is allocated between the allocation and the stores, so no collection can
        // see the instance half-filled (an empty slot is skipped by the traversal anyway).
        unsafe {
            let obj = owned(py, (self.alloc)(self.cls.bind(py).as_type_ptr(), 0))?;
            let base = obj.as_ptr() as *mut u8;
            for (off, value) in self.offsets.iter().zip(values) {
                *(base.add(*off) as *mut *mut ffi::PyObject) = value.into_ptr();
            }
            Ok(obj)
        }
    }
}

#[pymethods]
impl RecordMaker {
    /// `fields`: the slot names of a row, in order, then `control`.
    #[new]
    fn new(py: Python<'_>, cls: &Bound<'_, PyType>, fields: Vec<String>) -> PyResult<Self> {
        if fields.len() != 12 {
            return Err(PyValueError::new_err(
                "a row's 11 fields and control are needed",
            ));
        }
        Ok(RecordMaker {
            slots: Slots::probe(py, cls, &fields)?,
            scratch: std::sync::Mutex::new((KeyCache::default(), Vec::new())),
        })
    }
}

impl RecordMaker {
    /// A `Record`, untracked by the garbage collector: its slots hold ints, bytes, `None`
    /// and header tuples of `str` and bytes, so it cannot be part of a cycle when made (the
    /// header tuples are untracked for the same reason). A batch's records made in one call
    /// set off a collection every 700 of them while tracked.
    fn make<'py>(&self, py: Python<'py>, values: [Obj<'py>; 12]) -> PyResult<Obj<'py>> {
        self.slots.make_untracked(py, values)
    }
}

/// How `decode_run` makes the objects of a decoded batch without running their `__init__`:
/// the same probe as `RecordMaker`, for any slotted class (a batch header, its record list,
/// the decoded batch pairing them).
#[pyclass(module = "kafka_conformance_native", frozen)]
struct SlotMaker {
    slots: Slots,
}

#[pymethods]
impl SlotMaker {
    /// `fields`: the slots to fill, in the order the caller documents for each use.
    #[new]
    fn new(py: Python<'_>, cls: &Bound<'_, PyType>, fields: Vec<String>) -> PyResult<Self> {
        if fields.is_empty() {
            return Err(PyValueError::new_err("at least one slot is needed"));
        }
        Ok(SlotMaker {
            slots: Slots::probe(py, cls, &fields)?,
        })
    }
}

/// The records a region hands out, made one row at a time when read: the region was checked
/// in full by `read_records_v2`, so reading a row cannot fail.
#[pyclass(module = "kafka_conformance_native", frozen, sequence)]
struct RecordRows {
    maker: Option<Py<RecordMaker>>,
    buf: Py<PyBytes>,
    starts: Vec<u32>,
    base_offset: i64,
    base_timestamp: i64,
    log_append_time: Option<i64>,
}

/// A few header keys as `str`, reused (keys repeat in almost every batch).
#[derive(Default)]
struct KeyCache {
    keys: Vec<(Vec<u8>, PyObject)>,
}

impl KeyCache {
    fn get<'py>(&mut self, py: Python<'py>, raw: &[u8]) -> PyResult<Obj<'py>> {
        if let Some((_, k)) = self.keys.iter().find(|(r, _)| r.as_slice() == raw) {
            return Ok(k.bind(py).clone());
        }
        // validated as UTF-8 by read_record before any row is made
        let text = std::str::from_utf8(raw).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let k = PyString::new(py, text).into_any();
        if self.keys.len() < 16 {
            self.keys.push((raw.to_vec(), k.clone().unbind()));
        }
        Ok(k)
    }
}

impl RecordRows {
    fn fields<'py>(
        &self,
        py: Python<'py>,
        i: usize,
        cache: &mut KeyCache,
        headers: &mut Vec<HeaderAt>,
    ) -> PyResult<[Obj<'py>; 11]> {
        let buf = self.buf.as_bytes(py);
        let mut pos = self.starts[i] as usize;
        let f = read_record(buf, &mut pos, headers, true)
            .map_err(|_| PyValueError::new_err("a checked record no longer reads"))?;
        let header_tuple = match headers.len() {
            0 => PyTuple::empty(py).into_any(),
            n => {
                // SAFETY: a new tuple of n empty slots (null checked by `owned`), each slot
                // filled once, in range, with a new reference PyTuple_SetItem steals; no Vec
                // per record (measured: the allocator showed in `perf` for one).
                let t = owned(py, unsafe { ffi::PyTuple_New(n as ffi::Py_ssize_t) })?;
                for (i, h) in headers.iter().enumerate() {
                    let key = cache.get(py, &buf[h.key.0..h.key.1])?;
                    let pair = new_tuple(py, [key, bytes_or_none(py, buf, h.value)?])?;
                    untrack(&pair);
                    unsafe {
                        ffi::PyTuple_SetItem(t.as_ptr(), i as ffi::Py_ssize_t, pair.into_ptr())
                    };
                }
                untrack(&t);
                t
            }
        };
        let timestamp = self
            .log_append_time
            .unwrap_or(self.base_timestamp + f.timestamp_delta);
        Ok([
            new_int(py, self.base_offset + f.offset_delta)?,
            new_int(py, timestamp)?,
            bytes_or_none(py, buf, f.key)?,
            bytes_or_none(py, buf, f.value)?,
            header_tuple,
            small_int(py, i64::from(f.attributes))?,
            small_int(py, f.offset_delta)?,
            small_int(py, f.timestamp_delta)?,
            new_int(py, 2)?,
            none(py),
            small_int(py, f.length)?,
        ])
    }

    fn row<'py>(
        &self,
        py: Python<'py>,
        i: usize,
        cache: &mut KeyCache,
        headers: &mut Vec<HeaderAt>,
    ) -> PyResult<Obj<'py>> {
        new_tuple(py, self.fields(py, i, cache, headers)?)
    }

    fn record<'py>(
        &self,
        py: Python<'py>,
        maker: &RecordMaker,
        i: usize,
        cache: &mut KeyCache,
        headers: &mut Vec<HeaderAt>,
    ) -> PyResult<Obj<'py>> {
        let [a, b, c, d, e, f, g, h, j, k, l] = self.fields(py, i, cache, headers)?;
        maker.make(py, [a, b, c, d, e, f, g, h, j, k, l, none(py)])
    }
}

#[pymethods]
impl RecordRows {
    fn __len__(&self) -> usize {
        self.starts.len()
    }

    fn __getitem__<'py>(&self, py: Python<'py>, index: &Bound<'py, PyAny>) -> PyResult<Obj<'py>> {
        let n = self.starts.len() as isize;
        let mut cache = KeyCache::default();
        let mut headers = Vec::new();
        if let Ok(slice) = index.downcast::<PySlice>() {
            let ix = slice.indices(n)?;
            let mut out = Vec::with_capacity(ix.slicelength);
            let mut i = ix.start;
            for _ in 0..ix.slicelength {
                out.push(self.row(py, i as usize, &mut cache, &mut headers)?);
                i += ix.step;
            }
            return Ok(PyList::new(py, out)?.into_any());
        }
        let mut i: isize = index.extract()?;
        if i < 0 {
            i += n;
        }
        if i < 0 || i >= n {
            return Err(PyIndexError::new_err("record index out of range"));
        }
        self.row(py, i as usize, &mut cache, &mut headers)
    }

    /// Copied or pickled, the rows become a plain list of rows (what the Python loop makes).
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Obj<'py>, (Obj<'py>,))> {
        let all = self.__getitem__(py, &PySlice::full(py).into_any())?;
        let list = py.import("builtins")?.getattr("list")?;
        Ok((list, (all,)))
    }

    fn __iter__(slf: Py<Self>) -> RowIter {
        RowIter {
            rows: slf,
            next: 0,
            cache: KeyCache::default(),
            headers: Vec::new(),
        }
    }

    /// The rows as a list of `Record` objects, made by the `RecordMaker` given to
    /// `read_records_v2`, all in one call: no `next()` call through pyo3 per record (a
    /// batch's records, which the caller iterates anyway).
    fn records<'py>(&self, py: Python<'py>) -> PyResult<Obj<'py>> {
        let maker = self
            .maker
            .as_ref()
            .map(|m| m.get())
            .ok_or_else(|| PyValueError::new_err("no RecordMaker was given for these rows"))?;
        let n = self.starts.len();
        // the maker's key cache and scratch, kept from batch to batch: a decode of small
        // batches made every header key's str anew (and a cache for it) in each call. Held
        // already (a finalizer run by a collection inside this loop, iterating records of
        // its own) or poisoned: a fresh one for this call, never a wait.
        let mut own = (KeyCache::default(), Vec::new());
        let mut shared = maker.scratch.try_lock().ok();
        let (cache, headers) = match shared.as_deref_mut() {
            Some(kept) => (&mut kept.0, &mut kept.1),
            None => (&mut own.0, &mut own.1),
        };
        // SAFETY: a new list of n empty slots (null checked by `owned`); each slot is filled
        // once, in order, with a new reference PyList_SetItem steals; on an error the list
        // is released with its empty tail (list dealloc skips null items).
        let list = owned(py, unsafe { ffi::PyList_New(n as ffi::Py_ssize_t) })?;
        for i in 0..n {
            let record = self.record(py, maker, i, cache, headers)?;
            unsafe { ffi::PyList_SetItem(list.as_ptr(), i as ffi::Py_ssize_t, record.into_ptr()) };
        }
        Ok(list)
    }
}

/// Iterating a `RecordRows`: one row per `next()`.
#[pyclass(module = "kafka_conformance_native")]
struct RowIter {
    rows: Py<RecordRows>,
    next: usize,
    cache: KeyCache,
    headers: Vec<HeaderAt>,
}

#[pymethods]
impl RowIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Obj<'py>>> {
        let rows = self.rows.get();
        if self.next >= rows.starts.len() {
            return Ok(None);
        }
        let i = self.next;
        self.next += 1;
        rows.row(py, i, &mut self.cache, &mut self.headers)
            .map(Some)
    }
}

/// The records of a magic-2 batch's records region (uncompressed, or decompressed without
/// error or short read): the whole region is checked, then a `RecordRows` of the first
/// `keep` records (made as `RecordRow` tuples when read, or as `Record` objects by
/// `records()` with the `maker` given here) is returned; or `None`, having made nothing: the
/// reference decides this region.
#[pyfunction]
#[pyo3(signature = (buf, start, count, base_offset, base_timestamp, log_append_time, keep, maker=None))]
#[allow(clippy::too_many_arguments)]
fn read_records_v2(
    py: Python<'_>,
    buf: Bound<'_, PyBytes>,
    start: usize,
    count: i64,
    base_offset: i64,
    base_timestamp: i64,
    log_append_time: Option<i64>,
    keep: i64,
    maker: Option<Py<RecordMaker>>,
) -> Option<RecordRows> {
    if count < 0
        || keep < 0
        || !(-LIMIT < base_offset && base_offset < LIMIT)
        || !(-LIMIT < base_timestamp && base_timestamp < LIMIT)
    {
        return None;
    }
    let data = buf.as_bytes().get(start..)?;
    let starts = py
        .allow_threads(|| read_region(data, count as u64, keep as u64))
        .ok()?;
    let starts = starts.into_iter().map(|p| p + start as u32).collect();
    Some(RecordRows {
        maker,
        buf: buf.unbind(),
        starts,
        base_offset,
        base_timestamp,
        log_append_time,
    })
}

/// One v0/v1 message inside a legacy wrapper, as positions in the payload.
struct LegacyAt {
    offset: i64,
    crc: u32,
    magic: i64,
    attributes: i64,
    timestamp: i64,
    key: Option<(usize, usize)>,
    value: Option<(usize, usize)>,
    size: i64,
}

/// `N` bytes of `buf` at `at`, for a big-endian read (`Decline` past the end).
fn bytes_at<const N: usize>(buf: &[u8], at: usize) -> Parsed<[u8; N]> {
    buf.get(at..at.checked_add(N).ok_or(Decline)?)
        .and_then(|s| s.try_into().ok())
        .ok_or(Decline)
}

fn be_i16(buf: &[u8], at: usize) -> Parsed<i16> {
    Ok(i16::from_be_bytes(bytes_at(buf, at)?))
}

fn be_i32(buf: &[u8], at: usize) -> Parsed<i32> {
    Ok(i32::from_be_bytes(bytes_at(buf, at)?))
}

fn be_u32(buf: &[u8], at: usize) -> Parsed<u32> {
    Ok(u32::from_be_bytes(bytes_at(buf, at)?))
}

fn be_i64(buf: &[u8], at: usize) -> Parsed<i64> {
    Ok(i64::from_be_bytes(bytes_at(buf, at)?))
}

/// A length-prefixed field of a legacy message body (`Utils.sizeDelimited`).
fn sized(body: &[u8], at: usize) -> Parsed<(Option<(usize, usize)>, usize)> {
    let n = be_i32(body, at)?;
    if n < 0 {
        return Ok((None, at + 4));
    }
    let stop = at + 4 + n as usize;
    if stop > body.len() {
        return Err(Decline);
    }
    Ok((Some((at + 4, stop)), stop))
}

/// The inner messages of a decompressed v0/v1 wrapper payload (`buf`), all well formed:
/// entries that tile the payload exactly, sizes >= 14, magic 0 or 1, no compression, CRC-32
/// right, key and value ending exactly at the message's end.
fn read_legacy(buf: &[u8], log_append_time: Option<i64>) -> Parsed<Vec<LegacyAt>> {
    let mut pos = 0usize;
    let mut out = Vec::new();
    while pos < buf.len() {
        let offset = be_i64(buf, pos)?;
        let size = be_i32(buf, pos + 8)?;
        if size < 14 {
            return Err(Decline);
        }
        let start = pos + 12;
        let end = start + size as usize;
        let body = buf.get(start..end).ok_or(Decline)?;
        let crc = u32::from_be_bytes(body[0..4].try_into().map_err(|_| Decline)?);
        let magic = i64::from(body[4] as i8);
        let attributes = i64::from(body[5] as i8);
        if !(magic == 0 || magic == 1) || attributes & 7 != 0 {
            return Err(Decline);
        }
        if crc32fast::hash(&body[4..]) != crc {
            return Err(Decline);
        }
        let (timestamp, key_at) = if magic == 0 {
            (-1, 6)
        } else {
            (log_append_time.map_or_else(|| be_i64(body, 6), Ok)?, 14)
        };
        let (key, value_at) = sized(body, key_at)?;
        let (value, stop) = sized(body, value_at)?;
        if stop != body.len() {
            return Err(Decline);
        }
        let place = |at: Option<(usize, usize)>| at.map(|(a, b)| (a + start, b + start));
        out.push(LegacyAt {
            offset,
            crc,
            magic,
            attributes,
            timestamp,
            key: place(key),
            value: place(value),
            size: i64::from(size) + 12,
        });
        pos = end;
    }
    if out.is_empty() {
        return Err(Decline);
    }
    Ok(out)
}

/// The records of a compressed v0/v1 wrapper whose payload (`buf[start:]`) was decompressed
/// without error or short read: `(count, [Record of the first keep])`, every message checked;
/// or `None`, having made nothing: the reference decides this wrapper.
/// `log_append_time`: the wrapper's timestamp when it is a v1 wrapper with LogAppendTime.
#[pyfunction]
#[pyo3(signature = (buf, start, wrapper_magic, wrapper_offset, log_append_time, keep, maker))]
#[allow(clippy::too_many_arguments)]
fn read_legacy_records<'py>(
    py: Python<'py>,
    buf: Bound<'py, PyBytes>,
    start: usize,
    wrapper_magic: i64,
    wrapper_offset: i64,
    log_append_time: Option<i64>,
    keep: usize,
    maker: Bound<'py, RecordMaker>,
) -> PyResult<Option<(usize, Bound<'py, PyList>)>> {
    let Some(data) = buf.as_bytes().get(start..) else {
        return Ok(None);
    };
    let Ok(entries) = py.allow_threads(|| read_legacy(data, log_append_time)) else {
        return Ok(None);
    };
    let Ok(base) = legacy_base(wrapper_magic, wrapper_offset, &entries) else {
        return Ok(None); // the reference raises InvalidRecordException
    };
    let records = legacy_records(
        py,
        maker.get(),
        buf.as_bytes(),
        start,
        &entries,
        keep,
        |e| inner_offset(wrapper_magic, base, e),
    )?;
    Ok(Some((entries.len(), records)))
}

/// `DeepRecordsIterator`'s base of a v1 wrapper's relative inner offsets (the wrapper's
/// offset minus the last inner one; 0 for a wrapper at offset 0, or a v0 wrapper), or
/// `Decline` where the reference raises (a wrapper offset below the last inner offset).
fn legacy_base(wrapper_magic: i64, wrapper_offset: i64, entries: &[LegacyAt]) -> Parsed<i64> {
    if wrapper_magic != 1 || wrapper_offset == 0 {
        return Ok(0);
    }
    let last = entries.last().map_or(0, |e| e.offset);
    if wrapper_offset < last {
        return Err(Decline);
    }
    Ok(wrapper_offset - last)
}

/// An inner message's absolute offset: v1 wrappers' are relative to `base` (Java's long
/// arithmetic), v0 wrappers' absolute.
fn inner_offset(wrapper_magic: i64, base: i64, e: &LegacyAt) -> i64 {
    if wrapper_magic == 1 {
        base.wrapping_add(e.offset)
    } else {
        e.offset
    }
}

/// The `Record`s of the first `keep` of `entries` (read by `read_legacy` from `all[start..]`),
/// each at the offset `offset_of` gives it: what `_to_record` makes of a message.
fn legacy_records<'py>(
    py: Python<'py>,
    maker: &RecordMaker,
    all: &[u8],
    start: usize,
    entries: &[LegacyAt],
    keep: usize,
    offset_of: impl Fn(&LegacyAt) -> i64,
) -> PyResult<Bound<'py, PyList>> {
    let place = |at: Option<(usize, usize)>| at.map(|(a, b)| (a + start, b + start));
    let mut records = Vec::with_capacity(keep.min(entries.len()));
    for e in entries.iter().take(keep) {
        records.push(maker.make(
            py,
            [
                new_int(py, offset_of(e))?,
                new_int(py, e.timestamp)?,
                bytes_or_none(py, all, place(e.key))?,
                bytes_or_none(py, all, place(e.value))?,
                PyTuple::empty(py).into_any(),
                new_int(py, e.attributes)?,
                new_int(py, 0)?,
                new_int(py, 0)?,
                new_int(py, e.magic)?,
                new_int(py, i64::from(e.crc))?,
                small_int(py, e.size)?,
                none(py),
            ],
        )?);
    }
    PyList::new(py, records)
}

/// CRC-32C (Castagnoli) of `buf[start:]`, read in place (`Crc32C`; the `crc32c` crate, SSE 4.2
/// or ARMv8 CRC instructions where the CPU has them).
#[pyfunction]
#[pyo3(name = "crc32c")]
fn crc32c_of(py: Python<'_>, buf: Bound<'_, PyBytes>, start: usize) -> PyResult<u32> {
    let all = buf.as_bytes();
    let data = all.get(start..).ok_or_else(|| {
        PyValueError::new_err(format!(
            "start {start} is past the end of {} bytes",
            all.len()
        ))
    })?;
    Ok(py.allow_threads(|| ::crc32c::crc32c(data)))
}

/// A magic-2 batch header (`DefaultRecordBatch`, big-endian): where `scan_plain` and
/// `decode_run` read it.
///
/// | field            | at | bytes |
/// |------------------|----|-------|
/// | baseOffset       |  0 | 8     |
/// | batchLength      |  8 | 4     |
/// | partitionLeaderEpoch | 12 | 4 |
/// | magic            | 16 | 1     |
/// | crc (CRC-32C of attributes..end) | 17 | 4 |
/// | attributes       | 21 | 2     |
/// | lastOffsetDelta  | 23 | 4     |
/// | baseTimestamp    | 27 | 8     |
/// | maxTimestamp     | 35 | 8     |
/// | producerId       | 43 | 8     |
/// | producerEpoch    | 51 | 2     |
/// | baseSequence     | 53 | 4     |
/// | recordsCount     | 57 | 4     |
/// | records          | 61 | ...   |
///
/// A v0/v1 entry: offset (8) | size (4) | crc (4, CRC-32 of magic..end) | magic (1) |
/// attributes (1) | [timestamp (8), v1] | key (int32 length + bytes) | value (same).
const ENTRY_PREFIX: usize = 12; // offset + size, before a v0/v1 message or a batch's rest
const SIZE_AT: usize = 8;
const HEADER_UP_TO_MAGIC: usize = 17;
const MAGIC_AT: usize = 16;
const CRC_AT: usize = 17;
const ATTRIBUTES_AT: usize = 21;
const LAST_DELTA_AT: usize = 23;
const BASE_TIMESTAMP_AT: usize = 27;
const LEADER_EPOCH_AT: usize = 12;
const MAX_TIMESTAMP_AT: usize = 35;
const PRODUCER_ID_AT: usize = 43;
const PRODUCER_EPOCH_AT: usize = 51;
const BASE_SEQUENCE_AT: usize = 53;
const COUNT_AT: usize = 57;
const TIMESTAMP_TYPE_FLAG: i16 = 0x08;
const BATCH_OVERHEAD: usize = 61;
const CODEC_MASK: i16 = 0x07;
const CONTROL_FLAG: i16 = 0x20;
const MIN_ENTRY_SIZE: i32 = 14; // the size field's minimum (FileLogInputStream)

/// One batch of a file that Kafka's consumer reads without error, decided here in full:
/// (position in the chunk, size in bytes, magic, base offset, last offset, records, codec).
type PlainBatch = (usize, usize, i64, i64, i64, i64, i16);

/// A magic-2 batch at `b` (its whole bytes), decided as `decode_run` decides it (every
/// record checked, none kept): (base offset, last offset, records, codec).
fn scanned_v2(
    py: Python<'_>,
    b: &[u8],
    payloads: &run::Payloads<'_, '_>,
) -> PyResult<Option<(i64, i64, i64, i16)>> {
    let Some(taken) = run::decide_v2(py, b, |_| Some(0), payloads, true)? else {
        return Ok(None);
    };
    let h = &taken.header;
    // BaseOffset + lastOffsetDelta in Java's long arithmetic (|base| < 2^62: no wrap)
    let last = h.base_offset + i64::from(h.last_offset_delta);
    Ok(Some((h.base_offset, last, i64::from(h.count), h.codec)))
}

/// A top-level v0/v1 entry at `b` (its whole bytes, the 12-byte entry prefix included),
/// decided as `decode_run` decides it: (first offset, the entry's offset, messages, codec).
fn scanned_legacy(
    py: Python<'_>,
    b: &[u8],
    payloads: &run::Payloads<'_, '_>,
) -> PyResult<Option<(i64, i64, i64, i16)>> {
    let Some(entry) = run::decide_legacy(py, b, payloads)? else {
        return Ok(None);
    };
    let first = entry
        .entries
        .first()
        .map_or(entry.offset, |e| entry.offset_of(e));
    let count = entry.entries.len() as i64;
    Ok(Some((first, entry.offset, count, entry.codec())))
}

/// The replay's walk over the batches of a window of a log file (`FileLogInputStream`
/// framing): from `start`, every batch that is wholly inside the window and that the consumer
/// reads without error, as `PlainBatch` rows (positions in the window), until the first one
/// this function is not sure of (any check that fails, a control record the reference would
/// not parse: the reference walks those), a batch that runs past the window's end, or a batch
/// that ends at or after `stop`
/// (the range's end, as a window index). The batches taken are those `decode_run` takes;
/// compressed ones only with `decompressed_limit` (their payloads read by whole.rs within
/// it), else uncompressed ones alone.
/// Returns (rows, where the walk stopped, whether it reached `stop`, and the size of the batch
/// at the stop when only the window's end stopped it, else 0).
#[pyfunction]
#[pyo3(signature = (window, start, stop, decompressed_limit=None))]
fn scan_plain(
    py: Python<'_>,
    window: Bound<'_, PyBytes>,
    start: usize,
    stop: usize,
    decompressed_limit: Option<i64>,
) -> PyResult<(Vec<PlainBatch>, usize, bool, usize)> {
    let buf = window.as_bytes();
    let payloads = decompressed_limit.map_or(run::Payloads::Refused, run::Payloads::Native);
    let mut rows = Vec::new();
    let mut pos = start;
    while pos < stop {
        if buf.len().saturating_sub(pos) < HEADER_UP_TO_MAGIC {
            return Ok((rows, pos, false, HEADER_UP_TO_MAGIC));
        }
        let Ok(size) = be_i32(buf, pos + SIZE_AT) else {
            break;
        };
        // size < 14: the reference raises (or the int overflows): not ours
        let Some(total) = usize::try_from(size)
            .ok()
            .filter(|&s| s >= MIN_ENTRY_SIZE as usize)
            .map(|s| s + ENTRY_PREFIX)
        else {
            break;
        };
        let end = pos + total;
        if end > buf.len() {
            return Ok((rows, pos, false, total));
        }
        let b = &buf[pos..end];
        let magic = b[MAGIC_AT];
        let decided = match magic {
            2 => scanned_v2(py, b, &payloads)?,
            0 | 1 => scanned_legacy(py, b, &payloads)?,
            _ => None,
        };
        let Some((base, last, count, codec)) = decided else {
            break;
        };
        rows.push((pos, total, i64::from(magic), base, last, count, codec));
        pos = end;
        if end >= stop {
            return Ok((rows, pos, true, 0));
        }
    }
    Ok((rows, pos, false, 0))
}

#[pymodule]
fn kafka_conformance_native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // the API version conformance/primitives/native.py checks (API); 2: records() is a list
    // and scan_plain; 3: decode_run and SlotMaker; 4: decode_run takes v0/v1 entries
    m.add("API", 4)?;
    m.add_function(wrap_pyfunction!(read_records_v2, m)?)?;
    m.add_class::<RecordRows>()?;
    m.add_class::<RecordMaker>()?;
    m.add_class::<SlotMaker>()?;
    m.add_function(wrap_pyfunction!(run::decode_run, m)?)?;
    m.add_function(wrap_pyfunction!(crc32c_of, m)?)?;
    m.add_function(wrap_pyfunction!(read_legacy_records, m)?)?;
    m.add_function(wrap_pyfunction!(scan_plain, m)?)?;
    Ok(())
}
