"""English words and the words code writes for them: `socket` is `sock`, `directory` is `dir`.

A question is asked in English ("where is the header of an incoming packet read from the
socket?"), code is written in the abbreviations of its trade (`recv_pkt_hdr(sock)`). Each line
of the table below is one group of words that name the same thing in identifiers; a word of a
group brings the others. The table is general knowledge of identifier conventions across
Python, Rust, C and C++ (the abbreviations of the C and POSIX libraries, the STL's and Rust
std's names, a few common synonyms of programming verbs such as remove / delete / erase),
written once from those conventions, not from any benchmark's questions or answers.

search/code.py asks a question's bridged words as a second BM25 query at a quarter of the
weight (`bridged_scores`), leaving out those index/chunks.py already writes beside their word
at index time (its ABBREVIATIONS: a chunk that says `buf` says `buffer` too).

Words are matched in their base form: `directories` and `dirs` find the `directory` line
(`base_forms` strips the usual English endings). Every word is one lower-case ASCII token, so
FTS5 and search/bm25.py read each as one term.
"""

from __future__ import annotations

import functools

# One group per line: words that code uses for the same thing. A word may be in more than one
# line (`str` is a string, `string` is also text); it brings every line's words.
_GROUPS_TEXT = """
    directory dir dirs folder
    string str
    text txt
    length len size
    buffer buf
    pointer ptr
    configuration config cfg conf settings
    message msg
    error err
    number num
    initialize init
    allocate alloc
    deallocate dealloc free
    reallocate realloc
    reference ref
    vector vec
    array arr
    character char chr
    temporary tmp temp
    remove delete erase del rm
    iterator iter
    iterate iter
    previous prev
    next nxt
    source src
    destination dst dest
    maximum max
    minimum min
    count cnt
    index idx
    argument arg args
    parameter param params
    attribute attr attrs
    environment env
    information info
    expression expr
    utility util utils
    descriptor desc
    description desc
    capacity cap
    synchronize sync
    synchronous sync
    asynchronous async
    request req
    response resp res
    result res
    database db
    connection conn
    address addr
    position pos
    current cur curr
    context ctx
    command cmd
    compare cmp
    comparison cmp
    calculate calc
    value val
    variable var
    object obj
    property prop
    function func fn
    callback cb
    handle hdl
    handler hdl
    identifier ident id
    integer int
    boolean bool
    floating float
    double dbl
    unsigned uint
    signed sint
    statistics stats stat
    specification spec
    standard std
    library lib
    package pkg
    module mod
    document doc docs
    documentation doc docs
    implementation impl
    instance inst
    interface iface
    manager mgr
    management mgmt
    register reg
    registry reg
    operation op
    operator op
    options opts
    option opt
    optional opt
    original orig
    output out
    input inp
    file fd fp
    sequence seq
    sequential seq
    sample smp
    segment seg
    separator sep
    separate sep
    delimiter delim sep
    structure struct
    system sys
    table tbl
    target tgt
    token tok
    transaction txn tx
    transmit tx
    receive rx recv
    utility util
    version ver
    window win
    column col
    header hdr
    character ch
    line ln
    random rand rng
    generator gen
    generate gen
    generic gen
    temporary tmp
    timestamp ts
    time tm
    millisecond ms msec millis
    microsecond us usec micros
    nanosecond ns nsec nanos
    second sec secs
    minute min mins
    hour hr
    frequency freq
    image img
    picture pic
    process proc
    procedure proc
    processor proc cpu
    memory mem
    reply rsp
    answer ans
    average avg mean
    accumulator acc
    accumulate acc
    account acct
    allocator alloc
    application app
    authentication auth
    authorization auth authz
    authenticate auth
    backward bwd back
    forward fwd
    background bg
    foreground fg
    binary bin
    block blk
    boundary bound
    button btn
    certificate cert
    channel chan
    check chk
    checksum crc csum
    class cls klass
    client cli
    clear clr
    collection coll
    compile comp
    component comp
    compression compress zip
    concatenate concat cat
    condition cond
    constant const
    construct ctor
    constructor ctor
    destructor dtor
    destroy dtor drop
    container cont
    control ctrl
    controller ctrl
    convert conv cvt
    conversion conv
    coordinate coord
    copy cpy dup clone
    duplicate dup clone
    counter ctr
    create new make mk
    decimal dec
    declaration decl
    declare decl
    decrement dec decr
    increment inc incr
    default dflt def
    definition def defn
    define def
    dependency dep deps
    dependencies dep deps
    develop dev
    device dev
    development dev
    dictionary dict map
    difference diff
    dimension dim
    directory dir
    display disp show
    distance dist
    distribution dist
    division div
    divide div
    element elem elt
    entry ent
    equal eq
    equality eq
    escape esc
    evaluate eval
    event evt ev
    exception exc exn
    execute exec run
    execution exec
    extension ext
    extended ext
    external extern ext
    field fld
    filter flt
    format fmt
    formatter fmt
    fragment frag
    frame frm
    greater gt
    less lt
    group grp
    hash hsh
    hexadecimal hex
    history hist
    host hst
    identity ident
    ignore ign
    include incl inc
    insert ins push add
    append push add
    instruction instr insn
    interval ival
    interrupt irq intr
    keyboard kbd
    language lang
    label lbl
    level lvl
    list lst
    local loc
    location loc
    lock lck mutex
    logger log
    logging log
    lookup find get
    search find lookup
    mapping map
    matrix mat
    mismatch mis
    modify mod
    modification mod
    multiply mul mult
    multiplication mul
    subtract sub
    subtraction sub
    addition add
    negative neg
    network net
    neighbor nbr
    neighbour nbr
    normalize norm
    normal norm
    notification notify
    offset off ofs
    operand opnd
    packet pkt
    parent par
    partition part
    password pwd passwd pass
    pattern pat
    percent pct
    permission perm perms
    point pt
    prefix pfx
    suffix sfx
    print prt
    priority prio
    private priv
    public pub
    protected prot
    protocol proto
    quantity qty
    query qry
    queue que
    range rng
    receiver rcv
    record rec
    rectangle rect
    recursive rec recur
    redirect redir
    release rel
    relative rel
    remainder rem mod
    remote rmt
    replace repl
    replacement repl
    report rpt
    representation repr
    represent repr
    require req
    required req
    reserve rsv
    reset rst
    resource res rsrc
    return ret
    reverse rev
    revision rev
    rotate rot
    rotation rot
    round rnd
    scalar scl
    schedule sched
    scheduler sched
    screen scr
    section sec sect
    security sec
    select sel
    selection sel
    sender snd
    send snd
    serial ser
    serialize ser serde dump
    deserialize serde load
    server srv svr
    service svc srv
    session sess
    setting set
    signal sig
    signature sig
    simple simp
    single sgl
    socket sock
    sort srt
    specify spec
    square sqr sq
    stack stk
    statement stmt
    state st
    status stat
    storage store stor
    stream strm
    subscribe sub
    subscription sub
    successor succ
    predecessor pred
    predicate pred
    summary sum
    symbol sym
    symbolic sym
    synchronization sync
    template tmpl tpl
    terminal term tty
    terminate term
    thread thr
    threshold thresh
    transform xform
    translate trans
    translation trans
    transport trans
    truncate trunc
    type ty typ
    unicode uni
    unique uniq
    unknown unk
    update upd
    user usr
    validate valid check
    validation valid check
    velocity vel
    verbose verb
    vertex vtx
    virtual virt
    weight wt
    width wid
    height ht
    window wnd
    write wr
    read rd
    absolute abs
    alternative alt
    alternate alt
    approximate approx
    assert check
    assignment assign
    associate assoc
    association assoc
    attachment attach
    authority auth
    automatic auto
    available avail
    benchmark bench
    bitmap bmp
    capture cap
    category cat
    cluster clust
    combination combo
    comment cmt
    common comm
    communication comm
    compatibility compat
    compatible compat
    configure config
    consumer cons
    continue cont
    coordinates coords
    credential cred creds
    cursor cur
    decode dec
    encode enc
    decrypt dec
    encrypt enc
    encoding enc
    delete del
    detach det
    determine det
    endpoint ep
    enumeration enum
    enumerate enum
    equivalent equiv
    estimate est
    examine exam
    example ex
    expire exp
    expiration exp expiry
    exponent exp
    extract extr
    feature feat
    function fun func
    global glob
    graph graph
    graphics gfx
    hardware hw
    software sw
    identifier id
    inclusive incl
    exclusive excl
    initial init
    initialization init
    integral int
    intermediate inter
    internal intern int
    internationalization i18n
    localization l10n
    inverse inv
    invert inv
    iteration iter
    kernel krnl
    keyword kw kwarg kwargs
    limit lim
    literal lit
    logarithm log
    machine mach
    mathematics math
    medium med
    middle mid
    miscellaneous misc
    multiple multi
    mutable mut
    mutex mtx lock
    namespace ns
    native nat
    numeric num
    occurrence occ
    overflow ovf
    parenthesis paren parens
    performance perf
    physical phys
    positive pos
    possible poss
    precision prec
    preference pref prefs
    prepare prep
    problem prob
    producer prod
    product prod
    program prog
    progress prog
    project proj
    properties props
    provider prov
    proxy prx
    quotient quot
    reader rdr
    writer wtr
    recursion recur
    repository repo
    repeat rep
    resolution res
    resolve res
    retry retries
    serializer ser
    shared shr
    shift shft
    simulation sim
    similar sim
    specific spec
    substitute subst
    substitution subst
    substring substr
    traceback tb
    variant var
    vertical vert
    horizontal horiz
    volume vol
"""


def _groups(text: str) -> dict[str, frozenset[str]]:
    table: dict[str, set[str]] = {}
    for line in text.strip().splitlines():
        words = [word for word in line.split() if "_" not in word]
        for word in words:
            table.setdefault(word, set()).update(other for other in words if other != word)
    return {word: frozenset(others) for word, others in table.items() if others}


BRIDGE = _groups(_GROUPS_TEXT)


def base_forms(word: str) -> list[str]:
    """`word` and the forms it may have in the table: `directories` -> directory, `dirs` ->
    dir, `parsing` -> parse and pars, `created` -> create and creat."""
    forms = [word]
    if len(word) <= 3:
        return forms
    if word.endswith("ies"):
        forms.append(word[:-3] + "y")
    if word.endswith("es"):
        forms.append(word[:-2])
    if word.endswith("s") and not word.endswith("ss"):
        forms.append(word[:-1])
    for ending in ("ing", "ed"):
        if word.endswith(ending) and len(word) > len(ending) + 2:
            stem = word[: -len(ending)]
            forms += [stem, stem + "e"]
            if len(stem) > 2 and stem[-1] == stem[-2]:  # running -> run
                forms.append(stem[:-1])
    if word.endswith("er") and len(word) > 4:
        forms += [word[:-2], word[:-1]]
    return forms


@functools.lru_cache(maxsize=4096)
def bridge(word: str) -> tuple[str, ...]:
    """The words code uses for `word` (lower case), sorted; none when the table has none."""
    found: set[str] = set()
    for form in base_forms(word):
        found |= BRIDGE.get(form, frozenset())
    found.discard(word)
    return tuple(sorted(found))
