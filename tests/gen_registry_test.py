#!/usr/bin/env python3
"""gen_registry_test.py -- tools/gen_registry.py (issue 20): the tables it
writes from registrations, and the build failures it must cause: an op not
in ops.def, an op registered twice on one backend (or given two gradient
rules), a registration a macro hides or a line break splits, an alias of an
op without a rule, a .cl kernel of an unknown launch shape.  (The tree's
own registrations are read by the build itself, which stops on these.)

usage: gen_registry_test.py SOURCE_ROOT
"""
import os
import subprocess
import sys
import tempfile

ROOT = sys.argv[1] if len(sys.argv) > 1 else '.'
GEN = os.path.join(ROOT, 'tools', 'gen_registry.py')
OPS = os.path.join(ROOT, 'compiler', 'ir', 'ops.def')
failures = []


def run(what, files, extra=()):
    """Run the generator on {name: text}; (returncode, stderr, .c text)."""
    with tempfile.TemporaryDirectory() as d:
        srcs = []
        for name, text in files.items():
            p = os.path.join(d, name)
            with open(p, 'w', encoding='utf-8') as f:
                f.write(text)
            srcs.append(p)
        out_c, out_h = os.path.join(d, 'gen.c'), os.path.join(d, 'gen.h')
        r = subprocess.run([sys.executable, GEN, what, '--ops', OPS,
                            '--symbol', 'tbl', '--include', 'x.h'] +
                           list(extra) + [out_c, out_h] + srcs,
                           capture_output=True, text=True)
        c = ''
        if r.returncode == 0:
            with open(out_c, encoding='utf-8') as f:
                c = f.read()
            with open(out_h, encoding='utf-8') as f:
                c += f.read()
        return r.returncode, r.stderr, c


def expect_fail(label, what, files, needle, extra=()):
    rc, err, _ = run(what, files, extra)
    if rc == 0 or needle not in err:
        failures.append('%s: wanted a failure naming "%s", got rc %d: %s'
                        % (label, needle, rc, err.strip()))


def expect_ok(label, what, files, needles, extra=()):
    rc, err, c = run(what, files, extra)
    if rc != 0:
        failures.append('%s: failed: %s' % (label, err.strip()))
        return
    for n in needles:
        if n not in c:
            failures.append('%s: "%s" not in the output' % (label, n))


CL = ['--default', 'F', '--named', 'names', '--shape', 'bcast2=launch2',
      '--shape', 'unary=launch1']
expect_ok('kernels', 'kernels', {
    'a.c': 'dg_status k_add(dgr_kctx *k) { return 0; }\n'
           'DGR_KERNEL(Add, k_add);\nDGR_KERNEL_DT(Sub, k_sub, FI);\n'
           'DGR_KERNEL_EXEC(Variable);\n/* DGR_KERNEL(Mul, x) a comment */\n',
    'zoo.cl': '__kernel void dgk_bcast2_DivNoNan(__global T *a)\n'
              'ZUNARY(dgk_unary_Erf, erf(v))\n'},
    ['[DGC_OPID_Add] = {F, k_add}', '[DGC_OPID_Sub] = {FI, k_sub}',
     '[DGC_OPID_Variable] = {F, NULL}', '[DGC_OPID_DivNoNan] = {F, launch2}',
     '[DGC_OPID_Erf] = {F, launch1}', '{"zoo", "dgk_bcast2_DivNoNan"}',
     'dg_status k_add(dgr_kctx *k);', 'dg_status launch2(dgr_kctx *k);'],
    CL)
expect_fail('unknown op', 'kernels', {'a.c': 'DGR_KERNEL(NoSuchOp, f);\n'},
            'no such op in ops.def')
expect_fail('twice', 'kernels',
            {'a.c': 'DGR_KERNEL(Add, f);\n', 'b.c': 'DGR_KERNEL(Add, g);\n'},
            'op Add has a second kernel registration (the first: a.c:1)')
expect_fail('.c and .cl twice', 'kernels',
            {'a.c': 'DGR_KERNEL(Erf, f);\n',
             'z.cl': '__kernel void dgk_unary_Erf(__global T *x)\n'},
            'op Erf has a second kernel registration', CL)
expect_fail('unknown .cl shape', 'kernels',
            {'z.cl': '__kernel void dgk_ternary_Erf(__global T *x)\n'},
            'no launcher for shape "ternary"', CL)
expect_fail('hidden kernel', 'kernels',
            {'a.c': '#define K(op, fn) DGR_KERNEL(op, fn)\n'},
            'one whole line of its own')
expect_ok('grads', 'grads', {
    'g.c': 'DGC_GRAD(Neg)\n{\n}\nDGC_GRAD_N(Switch)\n{\n}\n'},
    ['[DGC_OPID_Neg] = {.one = dgc_grad_Neg}',
     '[DGC_OPID_Switch] = {.all = dgc_grad_Switch}',
     'dg_status dgc_grad_Neg(dgc_gctx *c, int32_t fwd, dgc_ref dy, '
     'dgc_ref *dx);'])
expect_ok('grad alias', 'grads', {
    'g.c': 'DGC_GRAD_N(Conv2D)\n{\n}\nDGC_GRAD_AS(MaxPool, Conv2D);\n'},
    ['[DGC_OPID_MaxPool] = {.all = dgc_grad_Conv2D}'])
expect_fail('grad alias of no rule', 'grads',
            {'g.c': 'DGC_GRAD_AS(MaxPool, Conv2D);\n'},
            'Conv2D has no rule of its own')
expect_fail('grad alias split', 'grads',
            {'g.c': 'DGC_GRAD(Neg)\n{\n}\nDGC_GRAD_AS(Abs,\n    Neg);\n'},
            'one whole line of its own')
expect_fail('grad unknown op', 'grads', {'g.c': 'DGC_GRAD(Nope)\n{\n}\n'},
            'gradient rule of op Nope: no such op')
expect_fail('grad twice', 'grads',
            {'g.c': 'DGC_GRAD(Neg)\n{\n}\nDGC_GRAD_N(Neg)\n{\n}\n'},
            'op Neg has a second gradient rule (the first: g.c:1)')
expect_fail('grad by macro', 'grads',
            {'g.c': '#define R(op) \\\n    DGC_GRAD(op) { return 0; }\n'},
            'one whole line of its own')

if failures:
    print('\n'.join(failures))
    sys.exit(1)
print('gen_registry: all cases behave')
