import numpy as np
from scipy import signal as sps
FS=16000
BANDS=[125,250,500,1000,2000,4000]
OPT=dict(order=3, zp=False, lp=3, ltop=5, lpk=True, direct_ms=2.0, inr='reg', edc_corr=False, edc='trunc', clsub=True)

def farina(y,x,L=16000):
    n=len(x); t=np.arange(n)/FS; T=1/np.log(7000/50)
    inv=x[::-1]*np.exp(-t/T)
    nf=len(y)+n
    h=np.fft.irfft(np.fft.rfft(y,nf)*np.fft.rfft(inv,nf),nf)
    return h[n-1:n-1+L]

def blocks(e,w,start=0):
    m=(len(e)-start)//w
    env=e[start:start+m*w].reshape(m,w).mean(1)
    t=start+w*np.arange(m)+w/2
    return t,env

def lundeby(e, p=5, dyn=20, top=5, iters=5, start_pk=True, win=0.01):
    N=len(e)
    nl=np.mean(e[int(0.9*N):]); nL=10*np.log10(nl)
    s0=int(np.argmax(e)) if start_pk else 0
    t,env=blocks(e,int(win*FS),s0)
    if len(env)<3: return N,nl,None
    L=10*np.log10(env+1e-300)
    i0=int(np.argmax(L))
    below=np.where(L[i0:]<nL+10)[0]
    i1=i0+(below[0] if len(below) else len(L)-i0)
    if i1-i0<2: return N, nl, None
    a,b=np.polyfit(t[i0:i1],L[i0:i1],1)
    if not a<0: return N,nl,None
    tc=(nL-b)/a
    for _ in range(iters):
        d10=-10/a
        if not np.isfinite(d10) or d10>N: break
        w=max(int(d10/p),1)
        t,env=blocks(e,w,s0)
        if len(env)<3: break
        L=10*np.log10(env+1e-300)
        idx=int(tc+d10)
        idx=min(idx,int(0.9*N)) if idx<N else int(0.9*N)
        nl=np.mean(e[max(idx,0):]); nL=10*np.log10(nl)
        i0=int(np.argmax(L))
        hi=nL+top+dyn; lo=nL+top
        sel=[j for j in range(i0,len(L)) if L[j]<=hi]
        if not sel: break
        js=sel[0]
        bl=np.where(L[js:]<lo)[0]
        je=js+(bl[0] if len(bl) else len(L)-js)
        if je-js<2: break
        a2,b2=np.polyfit(t[js:je],L[js:je],1)
        if a2>=0: break
        a,b=a2,b2
        tcn=(nL-b)/a
        if abs(tcn-tc)<1: tc=tcn; break
        tc=tcn
    return int(min(max(tc,0),N)), nl, (a,b)

def bandfilt(h,fc,o):
    sos=sps.butter(o['order'],[fc/np.sqrt(2),min(fc*np.sqrt(2),FS/2*0.999)],btype='band',fs=FS,output='sos')
    return sps.sosfiltfilt(sos,h) if o['zp'] else sps.sosfilt(sos,h)

def fit_time(edc, lo, hi):
    t=np.arange(len(edc))/FS
    idx=np.where((edc<=lo)&(edc>=hi))[0]
    if len(idx)<2: return float('nan')
    i0=idx[0]; i1=idx[-1]
    a,b=np.polyfit(t[i0:i1+1],edc[i0:i1+1],1)
    return -60.0/a if a<0 else float('nan')

def clar(e,pk,k,end,nl):
    a=np.sum(e[pk:pk+k]-nl); b=np.sum(e[pk+k:end]-nl) if end>pk+k else 0.0
    if b<=0 or a<=0: return 40.0
    return float(min(10*np.log10(a/b),40.0))

def measure(h, o=OPT, beam=False):
    e=h**2; N=len(e); pk=int(np.argmax(e))
    nl0=np.mean(e[int(0.9*N):])
    out={}
    out['ptn']=10*np.log10(e[pk]/nl0)
    tc,nl,_=lundeby(e,p=o['lp'],top=o['ltop'],start_pk=o['lpk'])
    nlx=nl0
    k=int(round(o['direct_ms']*FS/1000))
    d=np.sum(e[max(pk-k,0):pk+k+1]-nlx); r=np.sum(e[pk+k+1:tc]-nlx) if tc>pk+k+1 else 0
    out['drr']=10*np.log10(d/r) if r>0 else 40.0
    E50=np.sum(e[pk:pk+800]-nlx); late=np.sum(e[pk+800:tc]-nlx) if tc>pk+800 else 0
    out['d50']=float(min(E50/(E50+late),0.9999)) if late>0 else 0.9999
    for key in ['c50','c80','edt','t20','t30','inr']: out[key]=[]
    for fc in BANDS:
        hb=bandfilt(h,fc,o); eb=hb**2
        pkb=pk
        nlb0=np.mean(eb[int(0.9*N):])
        tcb,nlb,ab=lundeby(eb,p=o['lp'],top=o['ltop'],start_pk=o['lpk'])
        out['c50'].append(clar(eb,pk,800,tcb,nlb0 if o['clsub'] else 0.0))
        out['c80'].append(clar(eb,pk,1280,tcb,nlb0 if o['clsub'] else 0.0))
        mode=o.get('edc','sub')
        if mode=='trunc': seg=eb[pk:tcb]
        elif mode=='sublund': seg=eb[pk:tcb]-nlb
        else: seg=eb[pk:tcb]-nlb0
        s=np.cumsum(seg[::-1])[::-1]
        if mode=='corr' and ab is not None:
            a,b=ab; Etc=10**((a*tcb+b)/10); s=s+Etc/(-a*np.log(10)/10)
        if mode=='corrt' and ab is not None:
            seg=eb[pk:tcb]; s=np.cumsum(seg[::-1])[::-1]
            a,b=ab; Etc=10**((a*tcb+b)/10); s=s+Etc/(-a*np.log(10)/10)
        s=np.maximum(s,1e-30)
        edc=10*np.log10(s/s[0])
        out['edt'].append(fit_time(edc,0,-10))
        out['t20'].append(fit_time(edc,-5,-25))
        out['t30'].append(fit_time(edc,-5,-35))
        sos3=sps.butter(3,[fc/np.sqrt(2),min(fc*np.sqrt(2),FS/2*0.999)],btype='band',fs=FS,output='sos')
        e3=sps.sosfilt(sos3,h)**2; n3=np.mean(e3[int(0.9*N):])
        m=(N-pk)//160; env=e3[pk:pk+m*160].reshape(m,160).mean(1)
        out['inr'].append(float(10*np.log10(env.max()/n3)))
    return out
