import numpy as np
CAP = False
FS=16000
def blocks(seg,w):
    nb=len(seg)//w
    bl=seg[:nb*w].reshape(nb,w).mean(1); t=(np.arange(nb)+0.5)*w
    return t, 10*np.log10(bl+1e-30)
def _lundeby(e, i0, nl0, w0=160, p=5, iters=5, hi=10, lo=5):
    seg=e[i0:]; N=len(seg)
    t,Lb=blocks(seg,w0); Ln=10*np.log10(nl0)
    k=np.where(Lb<Ln+hi)[0]; k=k[0] if len(k) else len(Lb); k=max(k,2)
    sl,ic=np.polyfit(t[:k],Lb[:k],1)
    if sl>=0: return N, nl0, sl, ic
    cross=(Ln-ic)/sl
    nl=nl0
    for _ in range(iters):
        w=int(max(-10/(sl*p),1*16)) if sl<0 else w0
        w=int(min(w,max(N//8,16)))
        t,Lb=blocks(seg,w)
        # noise from cross + 10dB below point
        st=int(cross - 10/sl) if sl<0 else int(0.9*N)
        st=min(st,int(0.9*N)); st=max(st,0)
        nl=seg[st:].mean(); Ln=10*np.log10(nl)
        sel=(t>=0)&(Lb>Ln+lo)
        # from start to first drop below Ln+lo
        k=np.where(Lb<Ln+lo)[0]; k=k[0] if len(k) else len(Lb)
        j=np.where(Lb[:k]<=Lb[:k].max()-0)[0]
        a=max(0,np.argmax(Lb[:k]) if k>0 else 0)
        # regression over dynamic range: from Ln+lo+hi(ish) to Ln+lo
        s=np.where(Lb[:k]>Ln+lo+20)[0]; s0=s[-1]+1 if len(s) else a
        if k-s0<2: s0=max(0,k-2)
        if k<2: break
        sl2,ic2=np.polyfit(t[s0:k],Lb[s0:k],1)
        if sl2>=0: break
        nc=(Ln-ic2)/sl2
        sl,ic=sl2,ic2
        if abs(nc-cross)<w: cross=nc; break
        cross=nc
    return int(min(max(cross,w0),N)), nl, sl, ic


def lundeby(e, i0, nl0, **kw):
    N = len(e) - i0
    try:
        cr, nl, sl, ic = _lundeby(e, i0, nl0, **kw)
        if not (np.isfinite(nl) and nl > 0):
            nl = nl0
        if CAP:
            nl = min(nl, nl0)
        if not (np.isfinite(sl) and np.isfinite(ic)):
            sl, ic = -1.0, 0.0
        return int(min(max(cr, 16), N)), nl, sl, ic
    except Exception:
        return N, nl0, -1.0, 0.0
