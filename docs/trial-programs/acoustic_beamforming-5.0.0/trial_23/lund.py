import numpy as np
FS=16000
INCL=False
DEG=True
def blocks(e, B):
    n=len(e)//B
    if n<1: return np.array([e.mean()]), np.array([len(e)/2])
    env=e[:n*B].reshape(n,B).mean(1); t=(np.arange(n)+0.5)*B
    return env,t
def lundeby(e, blk_ms=10, fc=None, p=5, noise_db=(5,), dyn=(5,20), iters=5, noise_frac=0.1, init_margin=10):
    """e: squared band IR starting at onset. returns (cross_idx, a_dB_per_sample, b_dB, noise)"""
    N=len(e)
    if fc is not None and blk_ms=='f': blk_ms=800.0/fc+10.0
    B=max(int(blk_ms*FS/1000),1)
    env,t=blocks(e,B)
    L=10*np.log10(env+1e-300)
    noise=np.mean(e[int((1-noise_frac)*N):])
    Ln=10*np.log10(noise)
    i0=int(np.argmax(L))
    j=i0+np.argmax(L[i0:]<Ln+init_margin)
    if INCL:
        j=j+1
    if DEG and j-i0<2:
        j=i0+2
    if j-i0<2:
        return N,None,None,noise
    a,b=np.polyfit(t[i0:j],L[i0:j],1)
    if a>=0: return N,None,None,noise
    tc=(Ln-b)/a
    for it in range(iters):
        # new block length: p intervals per 10 dB
        Bn=int(max(10/abs(a)/p, 1))
        env2,t2=blocks(e,Bn)
        L2=10*np.log10(env2+1e-300)
        # noise from point noise_db below crossing
        tn=tc+noise_db[0]/abs(a)
        sn=int(min(max(tn,0),N*(1-noise_frac)))
        noise=np.mean(e[sn:]) if N-sn>0 else noise
        Ln=10*np.log10(noise)
        # regression on range from Ln+dyn[0]+dyn[1] down to Ln+dyn[0]
        hi=Ln+dyn[0]+dyn[1]; lo=Ln+dyn[0]
        k0=int(np.argmax(L2<=hi)); k1=int(np.argmax(L2<=lo))
        if k1-k0<2: break
        a,b=np.polyfit(t2[k0:k1],L2[k0:k1],1)
        if a>=0: break
        tcn=(Ln-b)/a
        if abs(tcn-tc)<1: tc=tcn; break
        tc=tcn
    tc=int(min(max(tc,1),N))
    return tc,a,b,noise
def edc(e, comp=True, **kw):
    tc,a,b,noise=lundeby(e,**kw)
    s=e[:tc]
    C=0.0
    if comp and a is not None and a<0:
        C=10**((a*tc+b)/10)/(abs(a)*np.log(10)/10)
    S=np.cumsum(s[::-1])[::-1]+C
    return S, tc, noise, C
